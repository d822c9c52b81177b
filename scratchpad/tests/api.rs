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
        &json!({
            "from": "a",
            "to": "b",
            "privacy": "private",
            "content": "hi",
            "metadata": {"k": [1, 2]},
        }),
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
        (
            "task.get",
            json!({"id": "nope", "agent": "a"}),
            ErrorCode::NotFound,
        ),
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
            ErrorCode::InvalidTtl,
        ),
        (
            "post",
            json!({"from": "a", "content": "x", "ttl_hours": 0.5}),
            ErrorCode::InvalidTtl,
        ),
        (
            "check.ttl",
            json!({"ttl_hours": 0.5}),
            ErrorCode::InvalidTtl,
        ),
        (
            "check.ttl",
            json!({"ttl_hours": -0.0}),
            ErrorCode::InvalidTtl,
        ),
        (
            "post",
            json!({"from": "a", "content": "x", "ttl_hours": "24"}),
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

#[test]
fn unknown_argument_keys_are_refused_before_anything_is_written() {
    let (mut s, dir) = store("unknown-keys");
    // A typo'd privacy key must not post the message in public.
    let err = api::handle(
        &mut s,
        "post",
        &json!({"from": "a", "to": "b", "Privacy": "private", "content": "secret"}),
        &no_env,
    )
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::UnknownKey, "{}", err.message());
    assert!(
        err.message().contains("\"Privacy\"") && err.message().contains("privacy"),
        "names the key and the accepted ones: {}",
        err.message()
    );
    let err = api::handle(
        &mut s,
        "post",
        &json!({"from": "a", "content": "x", "ttl": 1}),
        &no_env,
    )
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::UnknownKey, "{}", err.message());
    assert!(err.message().contains("ttl_hours"), "{}", err.message());
    let listed = api::handle(&mut s, "list", &json!({"agent": "outsider"}), &no_env).unwrap();
    assert_eq!(listed["messages"], json!([]), "nothing was posted");
    // Nested objects are checked too, and every operation and rule check refuses.
    let cases: &[(&str, Value)] = &[
        ("register", json!({"agent": "a", "teem": "x"})),
        ("unread", json!({"agent": "a", "project": "/p"})),
        ("list", json!({"agent": "a", "limt": 3})),
        (
            "task.create",
            json!({"creator": "a", "title": "t", "asignee": "b"}),
        ),
        ("cost.list", json!({"x": 1})),
        (
            "cost.record",
            json!({
                "agent": "a",
                "tool": "t",
                "input_tokens": 5,
                "pricing": {"input_per_million": 9},
            }),
        ),
        ("events", json!({"agent": "a", "kind": ["message.posted"]})),
        ("export", json!({"agent": "a", "ful": true})),
        (
            "rate.take",
            json!({"agent": "a", "tool": "t", "agent_per_minute": 1}),
        ),
        ("check.ttl", json!({"ttl": 3})),
        ("check.redact", json!({"text": "x", "root": "/p"})),
        (
            "check.visible",
            json!({"message": {"from": "a", "privacy": "public", "expires_at": 9, "To": "b"},
                   "reader": {"agent": "b"}, "now": 1}),
        ),
        (
            "check.visible",
            json!({"message": {"from": "a", "privacy": "public", "expires_at": 9},
                   "reader": {"agent": "b", "Team": "t"}, "now": 1}),
        ),
    ];
    for (op, args) in cases {
        let err = api::handle(&mut s, op, args, &no_env).unwrap_err();
        assert_eq!(
            err.code(),
            ErrorCode::UnknownKey,
            "{op} {args}: {}",
            err.message()
        );
    }
    let costs = api::handle(&mut s, "cost.list", &json!({}), &no_env).unwrap();
    assert_eq!(costs, json!([]), "the refused cost.record wrote nothing");
    // metadata is data, not arguments: any keys.
    api::handle(
        &mut s,
        "post",
        &json!({"from": "a", "content": "x", "metadata": {"Privacy": 1, "anything": [true]}}),
        &no_env,
    )
    .unwrap();
    // null counts as absent.
    api::handle(
        &mut s,
        "post",
        &json!({"from": "a", "content": "x", "privacy": null, "ttl_hours": null}),
        &no_env,
    )
    .unwrap();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn unknown_store_options_are_refused_with_unknown_key() {
    let err = api::config(&json!({"per_project_cap": 5, "colour": 1})).unwrap_err();
    assert_eq!(err.code(), ErrorCode::UnknownKey, "{}", err.message());
    assert!(
        err.message().contains("\"colour\"") && err.message().contains("per_project_cap"),
        "{}",
        err.message()
    );
}

#[test]
fn only_participants_read_a_task_its_history_and_its_artifacts() {
    let (mut s, dir) = store("task-read");
    let t = api::handle(
        &mut s,
        "task.create",
        &json!({"creator": "a", "assignee": "b", "title": "t"}),
        &no_env,
    )
    .unwrap();
    let id = t["id"].as_str().unwrap().to_string();
    api::handle(
        &mut s,
        "task.artifact",
        &json!({"id": id, "by": "b", "name": "notes", "content": "the secret plan"}),
        &no_env,
    )
    .unwrap();
    for op in ["task.get", "task.history", "task.artifacts"] {
        for participant in ["a", "b"] {
            api::handle(
                &mut s,
                op,
                &json!({"id": id, "agent": participant}),
                &no_env,
            )
            .unwrap_or_else(|e| panic!("{op} by {participant}: {e:?}"));
        }
        let err = api::handle(&mut s, op, &json!({"id": id, "agent": "c"}), &no_env).unwrap_err();
        assert_eq!(err.code(), ErrorCode::Forbidden, "{op}: {}", err.message());
        assert!(!err.message().contains("secret"), "{}", err.message());
        let err = api::handle(&mut s, op, &json!({"id": id}), &no_env).unwrap_err();
        assert_eq!(
            err.code(),
            ErrorCode::InvalidArgument,
            "{op} needs the reader"
        );
        let err =
            api::handle(&mut s, op, &json!({"id": "missing", "agent": "a"}), &no_env).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NotFound, "{op}");
    }
    let artifacts = api::handle(
        &mut s,
        "task.artifacts",
        &json!({"id": id, "agent": "a"}),
        &no_env,
    )
    .unwrap();
    assert_eq!(artifacts[0]["content"], "the secret plan");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn values_given_but_unusable_get_a_stable_code_never_a_default() {
    let (mut s, dir) = store("unusable");
    let big = 9_007_199_254_740_992i64; // 2^53: beyond what every JSON reader holds exactly
    let cases: &[(&str, Value, ErrorCode)] = &[
        (
            "events",
            json!({"agent": "a", "after": -1}),
            ErrorCode::InvalidArgument,
        ),
        (
            "events",
            json!({"agent": "a", "after": 1e300}),
            ErrorCode::InvalidArgument,
        ),
        (
            "events",
            json!({"agent": "a", "after": 5}),
            ErrorCode::InvalidArgument,
        ),
        (
            "events",
            json!({"agent": "a", "kinds": ["message.post"]}),
            ErrorCode::InvalidArgument,
        ),
        (
            "list",
            json!({"agent": "a", "project_root": ""}),
            ErrorCode::InvalidArgument,
        ),
        (
            "post",
            json!({"from": "a", "content": "x", "project_root": ""}),
            ErrorCode::InvalidArgument,
        ),
        ("unread", json!({"agent": ""}), ErrorCode::InvalidArgument),
        (
            "post",
            json!({"from": "a", "content": "x", "to": ""}),
            ErrorCode::InvalidArgument,
        ),
        (
            "post",
            json!({"from": "a", "content": "x", "to": "", "privacy": "private"}),
            ErrorCode::PrivateWithoutRecipient,
        ),
        (
            "register",
            json!({"agent": "a", "team": ""}),
            ErrorCode::InvalidArgument,
        ),
        (
            "task.create",
            json!({"creator": "a", "title": "t", "assignee": ""}),
            ErrorCode::InvalidArgument,
        ),
        (
            "rate.take",
            json!({"agent": "a", "tool": ""}),
            ErrorCode::InvalidArgument,
        ),
        (
            "cost.record",
            json!({"agent": "a", "tool": "t", "input_tokens": 1e300}),
            ErrorCode::InvalidArgument,
        ),
        (
            "cost.record",
            json!({"agent": "a", "tool": "t", "input_tokens": big}),
            ErrorCode::InvalidArgument,
        ),
        (
            "cost.record",
            json!({"agent": "a", "tool": "t", "pricing": {"input_per_million_micros": big}}),
            ErrorCode::InvalidArgument,
        ),
        (
            "check.addressing",
            json!({"privacy": "public", "to": ""}),
            ErrorCode::InvalidArgument,
        ),
    ];
    for (op, args, code) in cases {
        let err = api::handle(&mut s, op, args, &no_env).unwrap_err();
        assert_eq!(err.code(), *code, "{op} {args}: {}", err.message());
    }
    assert_eq!(
        api::handle(&mut s, "cost.list", &json!({}), &no_env).unwrap(),
        json!([])
    );
    let listed = api::handle(&mut s, "list", &json!({"agent": "b"}), &no_env).unwrap();
    assert_eq!(listed["messages"], json!([]), "no refused post was stored");
    // The newest cursor is fine, and so is 0.
    api::handle(
        &mut s,
        "post",
        &json!({"from": "a", "content": "x"}),
        &no_env,
    )
    .unwrap();
    let polled = api::handle(&mut s, "events", &json!({"agent": "a"}), &no_env).unwrap();
    let cursor = polled["cursor"].as_i64().unwrap();
    api::handle(
        &mut s,
        "events",
        &json!({"agent": "a", "after": cursor}),
        &no_env,
    )
    .unwrap();
    for (options, key) in [
        (json!({"per_project_cap": 1e300}), "per_project_cap"),
        (json!({"max_content_bytes": big}), "max_content_bytes"),
    ] {
        let err = api::config(&options).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{options}");
        assert!(err.message().contains(key), "{}", err.message());
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn environment_rate_limits_that_are_set_but_unusable_are_refused_naming_the_variable() {
    let (mut s, dir) = store("env");
    for value in ["abc", "", "0", "-3", "99999999999", "1.5", "\u{FFFD}"] {
        let env = |k: &str| (k == "LEAN_CTX_RATE_LIMIT_TOOL_PER_MIN").then(|| value.to_string());
        let err = api::handle(
            &mut s,
            "rate.take",
            &json!({"agent": "a", "tool": "t"}),
            &env,
        )
        .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{value:?}");
        assert!(
            err.message().contains("LEAN_CTX_RATE_LIMIT_TOOL_PER_MIN"),
            "{}",
            err.message()
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_docs_list_exactly_the_keys_each_operation_takes() {
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/scratchpad.md"
    ))
    .unwrap();
    let mut documented = std::collections::BTreeMap::new();
    for line in docs.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [_, op, args, _, _] = cells.as_slice() else {
            continue;
        };
        let Some(op) = op.strip_prefix('`').and_then(|o| o.strip_suffix('`')) else {
            continue;
        };
        // Drop "(defaults, ranges)" and "{nested keys}", then split the keys.
        let mut plain = String::new();
        let mut depth = 0;
        for c in args.chars() {
            match c {
                '(' | '{' => depth += 1,
                ')' | '}' => depth -= 1,
                _ if depth == 0 => plain.push(c),
                _ => {}
            }
        }
        let keys: std::collections::BTreeSet<String> = plain
            .split(',')
            .map(|k| k.trim().trim_end_matches('?').to_string())
            .filter(|k| !k.is_empty() && k != "none")
            .collect();
        documented.insert(op.to_string(), keys);
    }
    for request in api::STORE_REQUESTS {
        let declared: std::collections::BTreeSet<String> =
            request.args.iter().map(|a| a.key.to_string()).collect();
        assert_eq!(
            documented.get(request.name),
            Some(&declared),
            "docs/scratchpad.md's row for {}",
            request.name
        );
    }
    assert_eq!(
        documented.len(),
        api::STORE_REQUESTS.len(),
        "{documented:?}"
    );
}
