//! Case files of TypeScript outcomes (`tests/data/<name>_cases.json`): each case names a `boss.*`
//! operation (`op`), its arguments (`args`, a JSON array) and the outcome the TypeScript core
//! gives (`expect`: `input`, the first argument itself; `value`; or an `error` of a class,
//! message and code). [`run`] calls every case through `registry::call_json`, counts what it
//! executed and what `AIC_VECTOR` filtered, and fails with every case that differs. The helpers
//! read a case file for the tests that pick single cases.
//!
//! Include it beside `vector_filter.rs`:
//! `#[path = "support/outcome_cases.rs"] mod outcome_cases;`.
#![allow(dead_code)]

use agent_intercom_core::contract::Js;
use agent_intercom_core::registry::call_json;

use super::vector_filter::{Counts, Filter};

/// The case file `tests/data/<file>`.
pub fn load(file: &str) -> Js {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Js::parse_json(&text).unwrap()
}

/// The elements of a JSON array.
pub fn items(value: &Js) -> Vec<&Js> {
    match value {
        Js::Array(a) => a.items.iter().map(|i| i.as_ref().unwrap()).collect(),
        _ => panic!("not an array"),
    }
}

/// A string member (`""` when absent or not a string).
pub fn text<'a>(value: &'a Js, key: &str) -> &'a str {
    value.get(key).and_then(Js::as_str).unwrap_or("")
}

/// Runs every case of `tests/data/<file>` (its `count` must be the number of cases).
pub fn run(file: &str) {
    let doc = load(file);
    let list = items(doc.get("cases").unwrap());
    assert_eq!(
        doc.get("count").and_then(Js::as_num),
        Some(list.len() as f64)
    );
    let filter = Filter::from_env();
    let mut counts = Counts::new(list.len());
    let mut failures = Vec::new();
    for case in list {
        let id = text(case, "id");
        if !filter.selects(id) {
            counts.filtered += 1;
            continue;
        }
        counts.executed += 1;
        let args = case.get("args").unwrap();
        let op = format!("boss.{}", text(case, "op"));
        let answer = call_json(&op, &args.to_json().unwrap()).unwrap();
        let answer = Js::parse_json(&answer).unwrap();
        let expect = case.get("expect").unwrap();
        let ok = match text(expect, "kind") {
            "input" => answer.get("value") == items(args).first().copied(),
            "value" => answer.get("value") == expect.get("value"),
            _ => answer.get("error").is_some_and(|e| {
                text(e, "class") == text(expect, "class")
                    && text(e, "message") == text(expect, "message")
                    && e.get("code") == expect.get("code")
            }),
        };
        if !ok {
            failures.push(format!(
                "{id}: expected {}, got {}",
                expect.to_json().unwrap(),
                answer.to_json().unwrap()
            ));
        }
    }
    counts.report(file, &filter);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
