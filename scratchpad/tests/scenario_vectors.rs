//! Runs the store scenarios of vectors/scratchpad-v1.json (kind "scenario") against real SQLite
//! stores through the request facade, the way the C and Node runners do.

use std::collections::HashMap;
use std::sync::Arc;

use agent_intercom_scratchpad::{Store, SystemClock, api};
use serde_json::Value;

fn labels_of(ids: &[Value], names: &HashMap<String, String>) -> Vec<String> {
    ids.iter()
        .map(|v| {
            // Messages (objects with an id) or bare ids (evicted).
            let id = v.get("id").unwrap_or(v).as_str().unwrap_or("");
            names.get(id).cloned().unwrap_or_else(|| "?".into())
        })
        .collect()
}

#[test]
fn scratchpad_v1_store_scenarios() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../vectors/scratchpad-v1.json"
    ))
    .unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    let dir = std::env::temp_dir().join(format!("aic-scenarios-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (mut executed, mut skipped) = (0, 0);
    for (n, case) in cases.iter().enumerate() {
        let id = case["id"].as_str().unwrap();
        if case["kind"] != "scenario" {
            skipped += 1; // rule cases: core/tests/scratchpad_vectors.rs
            continue;
        }
        executed += 1;
        let config = api::config(&case["options"]).unwrap();
        let mut store = Store::open(
            &dir.join(format!("{n}.sqlite")),
            config,
            Arc::new(SystemClock),
        )
        .unwrap();
        let mut names: HashMap<String, String> = HashMap::new();
        for (i, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let op = step["op"].as_str().unwrap();
            let got = api::handle(&mut store, op, &step["args"], &|_| None);
            let expect = &step["expect"];
            if let Some(code) = expect["error"].as_str() {
                let err = got.expect_err(&format!("{id} step {i}: {op} should fail"));
                assert_eq!(err.code().as_str(), code, "{id} step {i}");
                continue;
            }
            let result = got.unwrap_or_else(|e| panic!("{id} step {i}: {op}: {e:?}"));
            if let Some(label) = step["label"].as_str() {
                names.insert(
                    result["id"].as_str().unwrap().to_string(),
                    label.to_string(),
                );
            }
            if let Some(want) = expect["ids"].as_array() {
                let list = if result.is_array() {
                    &result
                } else {
                    &result["messages"]
                };
                assert_eq!(
                    labels_of(list.as_array().unwrap(), &names),
                    labels_of_names(want),
                    "{id} step {i}: {op}"
                );
            }
            if let Some(want) = expect["evicted"].as_array() {
                assert_eq!(
                    labels_of(result["evicted"].as_array().unwrap(), &names),
                    labels_of_names(want),
                    "{id} step {i}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    println!(
        "scratchpad-v1.json: {} cases, {executed} executed (store scenarios), \
         {skipped} skipped (rule cases, run by the core)",
        cases.len()
    );
    assert!(executed >= 15);
    assert_eq!(executed + skipped, cases.len());
}

fn labels_of_names(want: &[Value]) -> Vec<String> {
    want.iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}
