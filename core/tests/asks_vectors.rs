//! Runs vectors/asks-v1.json through the core's ask-threading rules, by way of
//! `asks::check_ask_json`: the entry point the C export and the Node addon call, so the three
//! runners differ only in how they hand a case over. The runner reports executed and skipped
//! cases and fails when any case is neither (nor filtered by `AIC_VECTOR`).

#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::asks::{self, AskRefusal};
use agent_intercom_core::canonical::{self, Value};
use vector_filter::{Counts, Filter};

fn read() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/asks-v1.json");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn s<'a>(v: &'a Value<'a>, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

#[derive(Debug, Default)]
struct Summary {
    counts: Counts,
    /// Cases that ran and disagreed: (id, what).
    failed: Vec<(String, String)>,
    /// Cases of a kind this runner does not know: neither executed nor skipped.
    unhandled: Vec<String>,
}

/// The case's input (edges, send, maxOpenAsks) as JSON text, as every runner hands it over.
fn input(case: &Value<'_>) -> Result<String, String> {
    let members = ["edges", "send", "maxOpenAsks"]
        .into_iter()
        .map(|key| {
            Ok((
                key.into(),
                case.get(key).ok_or(format!("no {key}"))?.clone(),
            ))
        })
        .collect::<Result<_, String>>()?;
    canonical::canonical_json(&Value::Object(members)).map_err(|e| e.to_string())
}

fn check(case: &Value<'_>) -> Result<(), String> {
    let want = canonical::canonical_json(case.get("expected").ok_or("no expected")?)
        .map_err(|e| e.to_string())?;
    let got = asks::check_ask_json(&input(case)?).map_err(|e| e.to_string())?;
    if got == want {
        Ok(())
    } else {
        Err(format!("expected {want}, got {got}"))
    }
}

fn run(text: &str, filter: &Filter) -> Summary {
    let doc = canonical::parse(text).expect("asks-v1.json is JSON");
    assert_eq!(s(&doc, "corpus"), Some("agent-intercom/asks-v1"));
    assert_eq!(doc.get("version").and_then(Value::as_i64), Some(1));
    let cases = doc.get("cases").and_then(Value::as_array).expect("cases");
    assert_eq!(
        doc.get("count").and_then(Value::as_i64),
        Some(cases.len() as i64),
        "count field"
    );
    let mut summary = Summary {
        counts: Counts::new(cases.len()),
        ..Summary::default()
    };
    let mut ids = std::collections::BTreeSet::new();
    for case in cases {
        let id = s(case, "id").expect("every case has an id").to_string();
        assert!(ids.insert(id.clone()), "duplicate id {id}");
        if !filter.selects(&id) {
            summary.counts.filtered += 1;
            continue;
        }
        match s(case, "kind") {
            Some("check") => {
                summary.counts.executed += 1;
                if let Err(why) = check(case) {
                    summary.failed.push((id, why));
                }
            }
            _ => summary.unhandled.push(id),
        }
    }
    summary
}

#[test]
fn asks_v1_vectors() {
    let filter = Filter::from_env();
    let summary = run(&read(), &filter);
    assert!(summary.failed.is_empty(), "failures {:#?}", summary.failed);
    assert!(
        summary.unhandled.is_empty(),
        "neither executed nor skipped: {:?}",
        summary.unhandled
    );
    summary.counts.report("asks-v1.json", &filter);
}

#[test]
fn asks_v1_covers_every_refusal() {
    let text = read();
    for refusal in AskRefusal::all() {
        assert!(
            text.contains(&format!("\"refused\": \"{}\"", refusal.code())),
            "no case refuses with {}",
            refusal.code()
        );
    }
}

#[test]
fn runner_reports_mismatches_and_unknown_kinds_instead_of_passing() {
    let text = read()
        .replacen(
            "\"refused\": \"MUTUAL_ASK\"",
            "\"refused\": \"TOO_MANY_PENDING_ASKS\"",
            1,
        )
        .replacen("\"kind\": \"check\"", "\"kind\": \"future\"", 1);
    let summary = run(&text, &Filter::none());
    assert_eq!(summary.failed.len(), 1, "{:?}", summary.failed);
    assert_eq!(summary.unhandled.len(), 1);
    assert_eq!(summary.counts.executed + 1, summary.counts.total);
}

#[test]
fn aic_vector_runs_only_the_matching_cases_and_counts_the_rest() {
    let filter = Filter::matching("mutual");
    let summary = run(&read(), &filter);
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    let counts = summary.counts;
    assert!(counts.executed > 0 && counts.filtered > 0, "{counts:?}");
    assert_eq!(counts.executed + counts.filtered, counts.total);
    counts.report("asks-v1.json", &filter);
}
