//! The request table against the handlers, and the JSON text reader.

use serde_json::json;

use super::args::READ;
use super::table::OPTION_ARGS;
use super::*;

/// Every argument of `args` at any depth, as read paths ("pricing.input_per_million_micros").
fn declared(args: &[Arg], at: &str, out: &mut std::collections::BTreeSet<String>) {
    for a in args {
        let path = if at.is_empty() {
            a.key.to_string()
        } else {
            format!("{at}.{}", a.key)
        };
        if let Some(fields) = a.fields {
            declared(fields, a.key, out);
        }
        out.insert(path);
    }
}

/// One request giving every argument it takes, valid enough that the handler reads them all.
fn full_args(name: &str, dir: &std::path::Path) -> Value {
    match name {
        "register" => json!({"agent": "a", "project_root": "/p", "team": "t"}),
        "post" => json!({"from": "a", "content": "c", "to": "b", "category": "note",
            "priority": "high", "privacy": "private", "metadata": {"k": 1}, "task_id": "t1",
            "project_root": "/p", "ttl_hours": 2}),
        "unread" => json!({"agent": "b", "project_root": "/p"}),
        "list" => json!({"agent": "b", "project_root": "/p", "category": "note", "from": "a",
            "limit": 5, "after": null}),
        "task.create" => {
            json!({"creator": "a", "title": "t", "assignee": "b", "project_root": "/p"})
        }
        "task.get" | "task.history" | "task.artifacts" => {
            json!({"id": "missing", "agent": "a"})
        }
        "task.transition" => {
            json!({"id": "missing", "by": "a", "to": "working", "reason": "r"})
        }
        "task.artifact" => json!({"id": "missing", "by": "a", "name": "n", "content": "c"}),
        "rate.take" => json!({"agent": "a", "tool": "t", "global_per_min": 5,
            "agent_per_min": 5, "tool_per_min": 5}),
        "cost.record" => {
            json!({"agent": "a", "tool": "t", "input_tokens": 1, "output_tokens": 1,
            "cached_tokens": 1, "pricing": {"input_per_million_micros": 1,
            "output_per_million_micros": 1, "cached_per_million_micros": 1}})
        }
        "cost.list" => json!({}),
        "export" => json!({"agent": "a", "project_root": "/p", "limit": 5, "full": false,
            "path": dir.join("export.json")}),
        "events" => json!({"agent": "a", "project_root": "/p", "after": 0,
            "kinds": ["message.posted"], "actors": ["a"], "targets": ["b"], "limit": 5}),
        "check.visible" => json!({"message": {"from": "a", "to": "b", "privacy": "team",
            "sender_team": "t", "project_root": "/p", "expires_at": 9},
            "reader": {"agent": "b", "team": "t", "project_root": "/p"}, "now": 1}),
        "check.ttl" => json!({"ttl_hours": 3}),
        "check.transition" => json!({"from": "submitted", "to": "working"}),
        "check.addressing" => json!({"privacy": "private", "to": "b"}),
        "check.redact" => json!({"text": "x", "project_root": "/p"}),
        "check.rate" => json!({"per_minute": 1, "takes": [0, 1]}),
        "check.task_read" => json!({"task": {"creator": "a", "assignee": "b"}, "agent": "b"}),
        other => panic!("add {other} to full_args"),
    }
}

#[test]
fn every_declared_key_is_read_and_only_declared_keys_are() {
    // Reading an undeclared key panics (debug assertion); here each request also reads every
    // key it declares, so no declared key is silently ignored.
    let dir = std::env::temp_dir().join(format!("aic-api-keys-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut store = Store::open(
        &dir.join("pad.sqlite"),
        Config::default(),
        std::sync::Arc::new(crate::SystemClock),
    )
    .unwrap();
    let options = || {
        json!({"per_project_cap": 1, "per_recipient_cap": 1,
        "max_content_bytes": 1, "allow_full_export": true})
    };
    for (request, args) in STORE_REQUESTS
        .iter()
        .chain(CHECK_REQUESTS)
        .map(|r| (r, full_args(r.name, &dir)))
        .chain([(&OPTIONS, options())])
    {
        READ.with(|r| r.borrow_mut().clear());
        let result = if request.name == OPTIONS.name {
            config(&args).map(|_| Value::Null)
        } else {
            handle(&mut store, request.name, &args, &|_| None)
        };
        if let Err(e) = &result {
            assert_ne!(
                e.code(),
                ErrorCode::UnknownKey,
                "{}: {}",
                request.name,
                e.message()
            );
        }
        let mut want = std::collections::BTreeSet::new();
        declared(request.args, "", &mut want);
        let read = READ.with(|r| r.borrow().clone());
        assert_eq!(read, want, "{}: keys read vs keys declared", request.name);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unpaired_surrogates_are_refused_naming_where_they_are() {
    let cases = [
        (r#"{"from":"a","content":"a\ud800b"}"#, "content", 0xd800),
        (r#"{"content":"\ud800\u0041"}"#, "content", 0xd800),
        (r#"{"content":"x\udc00"}"#, "content", 0xdc00),
        (
            r#"{"a":1,"m":{"n":["x","\\\"",{"k":"\udfff"}]}}"#,
            "m.n[2].k",
            0xdfff,
        ),
        (r#"{"m":{"\ud83d":1}}"#, "a key of m", 0xd83d),
        (r#""\ud800""#, "the value", 0xd800),
    ];
    for (text, at, unit) in cases {
        let err = parse(Some(text), "the arguments").unwrap_err();
        assert_eq!(
            err.code(),
            ErrorCode::UnpairedSurrogate,
            "{text}: {}",
            err.message()
        );
        assert_eq!(
            unpaired_surrogate(text),
            Some((at.to_string(), unit)),
            "{text}"
        );
        assert!(
            err.message()
                .starts_with(&format!("the arguments: {at} holds")),
            "{}",
            err.message()
        );
    }
    // A pair is one character; other faults stay INVALID_JSON, even before a lone surrogate.
    assert_eq!(
        parse(Some(r#"{"c":"\ud83d\ude00"}"#), "x").unwrap(),
        json!({"c": "\u{1F600}"})
    );
    for text in [r#"{"c":"\u12"}"#, r#"{"c": nope, "d":"\ud800"}"#, "{"] {
        assert_eq!(
            parse(Some(text), "x").unwrap_err().code(),
            ErrorCode::InvalidJson,
            "{text}"
        );
    }
}

#[test]
fn the_tables_name_each_request_once() {
    let mut seen = std::collections::BTreeSet::new();
    for r in STORE_REQUESTS.iter().chain(CHECK_REQUESTS) {
        assert!(seen.insert(r.name), "{} twice", r.name);
        assert_eq!(is_check(r.name), CHECKS.contains(&r.name), "{}", r.name);
        let mut keys = std::collections::BTreeSet::new();
        for a in r.args {
            assert!(keys.insert(a.key), "{}: {} twice", r.name, a.key);
        }
    }
    assert_eq!(OPTION_KEYS, OPTION_ARGS.map(|a| a.key));
}
