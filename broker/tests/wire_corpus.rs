//! Runs vectors/wire-v4.json (frames in, frames expected out) against a live broker. The Node
//! runner (tests/node/wire-corpus.test.js) runs the same file.

mod common;
#[path = "../../core/tests/support/vector_filter.rs"]
mod vector_filter;

use std::collections::HashMap;
use std::time::Duration;

use common::*;
use serde_json::Value;
use vector_filter::{Counts, Filter};

fn substitute(value: &Value, vars: &HashMap<String, Value>) -> Value {
    match value {
        Value::String(s) => match s.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
            Some(name) => vars
                .get(name)
                .cloned()
                .unwrap_or_else(|| panic!("${{{name}}} was never captured")),
            None => value.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, vars)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute(v, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn matches(
    expected: &Value,
    actual: &Value,
    vars: &mut HashMap<String, Value>,
    at: &str,
) -> Result<(), String> {
    match expected {
        Value::String(s) if s == "$any" => Ok(()),
        Value::String(s) if s.starts_with("$capture:") => {
            vars.insert(s["$capture:".len()..].to_string(), actual.clone());
            Ok(())
        }
        Value::Object(map) => {
            let Some(actual_map) = actual.as_object() else {
                return Err(format!("{at}: expected an object, got {actual}"));
            };
            for (key, value) in map {
                let Some(got) = actual_map.get(key) else {
                    return Err(format!("{at}.{key}: missing in {actual}"));
                };
                matches(value, got, vars, &format!("{at}.{key}"))?;
            }
            Ok(())
        }
        Value::Array(items) => {
            let Some(got) = actual.as_array() else {
                return Err(format!("{at}: expected an array, got {actual}"));
            };
            if got.len() != items.len() {
                return Err(format!(
                    "{at}: expected {} items, got {}",
                    items.len(),
                    got.len()
                ));
            }
            items
                .iter()
                .zip(got)
                .enumerate()
                .try_for_each(|(i, (e, a))| matches(e, a, vars, &format!("{at}[{i}]")))
        }
        other if other == actual => Ok(()),
        other => Err(format!("{at}: expected {other}, got {actual}")),
    }
}

fn run_case(case: &Value) -> Result<(), String> {
    let id = case["id"].as_str().unwrap();
    let config = case.get("config").cloned().unwrap_or(Value::Null);
    let broker = Broker::start_with("wirecase", |c| {
        for (key, value) in config.as_object().into_iter().flatten() {
            let text = value
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| value.to_string());
            c.set(key, &text).unwrap();
        }
    });
    let mut clients: HashMap<String, Client> = HashMap::new();
    let mut vars = HashMap::new();
    for (n, step) in case["steps"].as_array().unwrap().iter().enumerate() {
        let name = step["client"].as_str().unwrap().to_string();
        let client = clients
            .entry(name.clone())
            .or_insert_with(|| broker.connect());
        let at = format!("{id} step {n} ({name})");
        if let Some(frame) = step.get("send") {
            client.send(substitute(frame, &vars));
        } else if let Some(expected) = step.get("expect") {
            let expected = substitute(expected, &vars);
            let actual = client
                .recv_opt(Duration::from_secs(5))
                .ok_or_else(|| format!("{at}: no frame, expected {expected}"))?;
            matches(&expected, &actual, &mut vars, &at)?;
            if let Some(text) = step.get("notContains").and_then(Value::as_str)
                && actual.to_string().contains(text)
            {
                return Err(format!("{at}: {actual} contains {text:?}"));
            }
        } else if step.get("expectClose").is_some() {
            if !client.closed() {
                return Err(format!("{at}: the connection stayed open"));
            }
        } else if step.get("disconnect").is_some() {
            clients.remove(&name);
        } else {
            return Err(format!("{at}: unknown step {step}"));
        }
    }
    Ok(())
}

#[test]
fn wire_v4_vectors() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../vectors/wire-v4.json"
    ))
    .unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(doc["count"].as_u64(), Some(cases.len() as u64));
    let filter = Filter::from_env();
    let mut counts = Counts::new(cases.len());
    let mut failures = Vec::new();
    for case in cases {
        if !filter.selects(case["id"].as_str().unwrap()) {
            counts.filtered += 1;
            continue;
        }
        counts.executed += 1;
        failures.extend(run_case(case).err());
    }
    counts.report("wire-v4.json", &filter);
    assert!(
        failures.is_empty(),
        "{} failed: {failures:#?}",
        failures.len()
    );
}
