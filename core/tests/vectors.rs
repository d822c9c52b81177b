//! Runs `vectors/*.json` through the core. Each runner prints what it executed and skipped, and
//! fails when any vector is neither (nor filtered by `AIC_VECTOR`).

#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::canonical::{self, Value};
use agent_intercom_core::corpus::{self, Outcome};
use agent_intercom_core::protocol;
use vector_filter::{Counts, Filter};

fn read(name: &str) -> String {
    let path = format!("{}/../vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn protocol_v4_corpus_hash_is_the_published_one() {
    let text = read("protocol-v4.json");
    assert_eq!(
        text,
        corpus::CORPUS_JSON,
        "embedded corpus differs from the file"
    );
    let doc = canonical::parse(&text).unwrap();
    let computed = corpus::semantics_hash_of(&doc).unwrap();
    assert_eq!(computed, protocol::KNOWN_SEMANTICS_HASH);
    assert_eq!(
        doc.get("semanticsHash").and_then(Value::as_str),
        Some(protocol::KNOWN_SEMANTICS_HASH)
    );
    assert_eq!(corpus::semantics_hash(), protocol::KNOWN_SEMANTICS_HASH);
    assert_eq!(corpus::semantics_payload().len(), 38_026);
    assert_eq!(
        doc.get("version").and_then(Value::as_i64),
        Some(protocol::VECTOR_SCHEMA_VERSION as i64)
    );
    let vectors = corpus::parse_vectors(&doc).unwrap();
    assert_eq!(
        Some(vectors.len() as i64),
        doc.get("count").and_then(Value::as_i64)
    );
    assert_eq!(vectors.len(), 48);
}

#[test]
fn changing_any_vector_changes_the_hash() {
    let text = read("protocol-v4.json").replacen("\"alpha\"", "\"Alpha\"", 1);
    let doc = canonical::parse(&text).unwrap();
    assert_ne!(
        corpus::semantics_hash_of(&doc).unwrap(),
        protocol::KNOWN_SEMANTICS_HASH
    );
}

fn run_file(name: &str, filter: &Filter) -> corpus::Summary {
    let text = read(name);
    let doc = canonical::parse(&text).unwrap();
    let vectors = corpus::parse_vectors(&doc).unwrap();
    assert_eq!(
        Some(vectors.len() as i64),
        doc.get("count").and_then(Value::as_i64),
        "{name}: count field"
    );
    let total = vectors.len();
    let selected: Vec<_> = vectors
        .into_iter()
        .filter(|v| filter.selects(v.name))
        .collect();
    let summary = corpus::run_all(&selected);
    for (vector, reason) in &summary.skipped {
        println!("  skipped {vector:?}: {reason}");
    }
    assert!(
        summary.failed.is_empty(),
        "{name}: failures {:#?}",
        summary.failed
    );
    assert!(
        summary.ok(),
        "{name}: some vector was neither executed nor skipped"
    );
    Counts {
        total,
        executed: summary.executed(),
        skipped: summary.skipped.len(),
        filtered: total - selected.len(),
    }
    .report(name, filter);
    summary
}

#[test]
fn protocol_v4_vectors_execute() {
    let filter = Filter::from_env();
    let summary = run_file("protocol-v4.json", &filter);
    if !filter.active() {
        assert_eq!(summary.executed(), 43);
        assert_eq!(summary.skipped.len(), 5);
    }
}

#[test]
fn local_vectors_execute() {
    let summary = run_file("protocol-v4-local.json", &Filter::from_env());
    assert_eq!(summary.skipped.len(), 0);
}

#[test]
fn runner_reports_mismatches_instead_of_passing() {
    let text = read("protocol-v4.json").replacen(
        "\"expected\": \"valid_unscoped\"",
        "\"expected\": \"valid_scoped\"",
        1,
    );
    let doc = canonical::parse(&text).unwrap();
    let vectors = corpus::parse_vectors(&doc).unwrap();
    match corpus::run_vector(&vectors[0]) {
        Outcome::Executed(Err(why)) => assert!(why.contains("valid_unscoped"), "{why}"),
        other => panic!("expected a failure, got {other:?}"),
    }
    let mut unknown = corpus::parse_vectors(&doc).unwrap().remove(1);
    unknown.operation = "teleport";
    assert!(matches!(
        corpus::run_vector(&unknown),
        Outcome::Executed(Err(_))
    ));
}

#[test]
fn canonical_known_answers() {
    let text = read("canonical.json");
    let doc = canonical::parse(&text).unwrap();
    let cases = doc.get("cases").and_then(Value::as_array).unwrap();
    assert_eq!(
        Some(cases.len() as i64),
        doc.get("count").and_then(Value::as_i64)
    );
    let filter = Filter::from_env();
    let mut counts = Counts::new(cases.len());
    for case in cases {
        let id = case.get("id").and_then(Value::as_str).unwrap();
        if !filter.selects(id) {
            counts.filtered += 1;
            continue;
        }
        let Some(input) = case.get("json").and_then(Value::as_str) else {
            // JavaScript-only cases (undefined, -0 as a value, class instances) run in Node.
            counts.skipped += 1;
            continue;
        };
        let domain = case
            .get("domain")
            .and_then(Value::as_str)
            .unwrap_or("agent-intercom-test");
        match case.get("error").and_then(Value::as_str) {
            Some(code) => {
                let err = canonical::canonical_hash_of_text(domain, input).unwrap_err();
                assert_eq!(err.code().as_str(), code, "{id}: {err}");
            }
            None => {
                let canonical_json = case.get("canonical").and_then(Value::as_str).unwrap();
                assert_eq!(
                    canonical::canonical_json_of_text(input).unwrap(),
                    canonical_json,
                    "{id}"
                );
                if let Some(hash) = case.get("hash").and_then(Value::as_str) {
                    assert_eq!(
                        canonical::canonical_hash_of_text(domain, input).unwrap(),
                        hash,
                        "{id}"
                    );
                }
            }
        }
        counts.executed += 1;
    }
    counts.report("canonical.json", &filter);
    assert!(filter.active() || counts.executed > 0);
}

#[test]
fn the_operation_and_outcome_lists_are_what_the_corpora_use() {
    let mut operations = std::collections::BTreeSet::new();
    let mut outcomes = std::collections::BTreeSet::new();
    for name in ["protocol-v4.json", "protocol-v4-local.json"] {
        let text = read(name);
        let doc = canonical::parse(&text).unwrap();
        for v in corpus::parse_vectors(&doc).unwrap() {
            assert!(
                corpus::OPERATIONS.contains(&v.operation),
                "{name}/{}: operation {:?} is not in corpus::OPERATIONS",
                v.name,
                v.operation
            );
            assert!(
                corpus::OUTCOMES.contains(&v.expected),
                "{name}/{}: outcome {:?} is not in corpus::OUTCOMES",
                v.name,
                v.expected
            );
            operations.insert(v.operation.to_string());
            outcomes.insert(v.expected.to_string());
        }
    }
    // Nothing listed that no vector uses (the lists are the corpora's vocabulary, not a guess).
    for op in corpus::OPERATIONS {
        assert!(
            operations.contains(op),
            "{op} is listed but no vector uses it"
        );
    }
    for outcome in corpus::OUTCOMES {
        // `hidden` is in the TypeScript core's type of the corpus; no published vector uses it.
        assert!(
            outcomes.contains(outcome) || outcome == "hidden",
            "{outcome} is listed but no vector uses it"
        );
    }
    for op in corpus::WIRE_OPERATIONS {
        assert!(corpus::OPERATIONS.contains(&op), "{op}");
    }
}
