//! Runs vectors/boss-policy-v1.json and vectors/feature-routing-v1.json through the core's
//! operations by name (`registry::call_json`, what the C export calls), so the Rust, C and Node
//! runners differ only in how they hand a case over. Each reports executed and skipped cases and
//! fails when any case is neither (nor filtered by `AIC_VECTOR`, matched against the name).

#[path = "support/contract_call.rs"]
mod contract_call;
#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::boss::{feature, policy};
use agent_intercom_core::contract::Js;
use vector_filter::{Counts, Filter};

fn read(name: &str) -> String {
    let path = format!("{}/../vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The operation's answer, or the class of its refusal.
fn call(op: &str, args: &[&Js]) -> Result<Js, String> {
    contract_call::call(op, args).map_err(|refusal| refusal.class)
}

fn text<'a>(v: &'a Js, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Js::as_str)
}

#[derive(Debug, Default)]
struct Summary {
    counts: Counts,
    failed: Vec<(String, String)>,
}

fn vectors(doc: &Js) -> Vec<&Js> {
    let Some(Js::Array(list)) = doc.get("vectors") else {
        panic!("no vectors")
    };
    let items: Vec<&Js> = list.items.iter().flatten().collect();
    assert_eq!(
        doc.get("count").and_then(Js::as_num),
        Some(items.len() as f64),
        "count field"
    );
    items
}

fn boss_case(v: &Js) -> Result<(), String> {
    let state = call("boss.bossPolicyStateForVector", &[v])?;
    let get = |k: &str| v.get(k).cloned().unwrap_or(Js::Undefined);
    let decision = call(
        "boss.authorizeBossPolicy",
        &[
            &state,
            &get("actorId"),
            &get("action"),
            &get("targetId"),
            &get("context"),
        ],
    )?;
    let allowed = decision.get("allowed") == Some(&Js::Bool(true));
    let got = text(&decision, if allowed { "reason" } else { "code" }).unwrap_or("?");
    let want = text(v, "expectedReasonOrCode").unwrap_or("");
    if Some(&Js::Bool(allowed)) == v.get("expectedAllowed") && got == want {
        Ok(())
    } else {
        Err(format!("expected {want}, got {got} (allowed {allowed})"))
    }
}

/// Runs every vector of a corpus file through `case`, counting what ran and what was filtered.
fn run(
    text_of_file: &str,
    corpus: &str,
    filter: &Filter,
    case: fn(&Js) -> Result<(), String>,
) -> Summary {
    let doc = Js::parse_json(text_of_file).expect("the corpus is JSON");
    assert_eq!(text(&doc, "corpus"), Some(corpus));
    let list = vectors(&doc);
    let mut summary = Summary {
        counts: Counts::new(list.len()),
        ..Summary::default()
    };
    for v in list {
        let name = text(v, "name")
            .expect("every vector has a name")
            .to_string();
        if !filter.selects(&name) {
            summary.counts.filtered += 1;
            continue;
        }
        summary.counts.executed += 1;
        if let Err(why) = case(v) {
            summary.failed.push((name, why));
        }
    }
    summary
}

fn run_boss(text_of_file: &str, filter: &Filter) -> Summary {
    run(
        text_of_file,
        "agent-intercom-core/boss-run-v1/policy-vectors",
        filter,
        boss_case,
    )
}

fn run_routing(text_of_file: &str, filter: &Filter) -> Summary {
    run(
        text_of_file,
        "agent-intercom-core/boss-run-v1/feature-routing-vectors",
        filter,
        routing_case,
    )
}

/// One feature-routing vector: the core builds its scenario (`featureRoutingCaseForVector`:
/// the entry point, its arguments and the concrete expectation), then the entry point runs.
fn routing_case(v: &Js) -> Result<(), String> {
    let case = call("boss.featureRoutingCaseForVector", &[v])?;
    let entry = text(&case, "entryPoint").ok_or("no entryPoint")?;
    let Some(Js::Array(args)) = case.get("args") else {
        return Err("no args".into());
    };
    let args: Vec<&Js> = args.items.iter().flatten().collect();
    let expected = case.get("expected").ok_or("no expected")?;
    match (
        call(&format!("boss.{entry}"), &args),
        text(expected, "throws"),
    ) {
        (Err(class), Some(want)) if class == want => Ok(()),
        (Ok(decision), None) => {
            if decision.get("allowed") != expected.get("allowed") {
                return Err(format!("expected {expected:?}, got {decision:?}"));
            }
            let key = if decision.get("allowed") == Some(&Js::Bool(true)) {
                "reason"
            } else {
                "code"
            };
            match expected.get(key) {
                Some(want) if decision.get(key) != Some(want) => {
                    Err(format!("expected {expected:?}, got {decision:?}"))
                }
                _ => Ok(()),
            }
        }
        (got, _) => Err(format!("expected {expected:?}, got {got:?}")),
    }
}

#[test]
fn boss_policy_v1_vectors() {
    let filter = Filter::from_env();
    let summary = run_boss(&read("boss-policy-v1.json"), &filter);
    assert!(summary.failed.is_empty(), "failures {:#?}", summary.failed);
    summary.counts.report("boss-policy-v1.json", &filter);
}

#[test]
fn feature_routing_v1_vectors() {
    let filter = Filter::from_env();
    let summary = run_routing(&read("feature-routing-v1.json"), &filter);
    assert!(summary.failed.is_empty(), "failures {:#?}", summary.failed);
    summary.counts.report("feature-routing-v1.json", &filter);
}

#[test]
fn the_corpora_hash_to_the_published_values() {
    assert_eq!(
        policy::semantics_hash(),
        "5fe94cc2c81bba8b50c6d6cd31487231ebfa10ee2d05495c2b088b12e2958dfa"
    );
    assert_eq!(
        feature::vectors::routing_semantics_hash(),
        "e8ddde569a188a122b6ba0e257e23ba203bbf0897dcb3c84994be3390e26e63f"
    );
    // The crate embeds its own copies; they are the shipped files.
    assert_eq!(policy::VECTORS_JSON, read("boss-policy-v1.json"));
    assert_eq!(
        feature::vectors::VECTORS_JSON,
        read("feature-routing-v1.json")
    );
    let doc = Js::parse_json(policy::VECTORS_JSON).unwrap();
    assert_eq!(doc.get("roleEdgeCount").and_then(Js::as_num), Some(49.0));
    assert_eq!(
        doc.get("controlEdgeCount").and_then(Js::as_num),
        Some(441.0)
    );
    assert_eq!(vectors(&doc).len(), 523);
    let doc = Js::parse_json(feature::vectors::VECTORS_JSON).unwrap();
    assert_eq!(vectors(&doc).len(), 45);
}

#[test]
fn a_changed_vector_changes_the_hash_and_fails_the_runner() {
    let file = read("boss-policy-v1.json");
    let edited = file.replacen(
        "\"expectedReasonOrCode\":\"self\"",
        "\"expectedReasonOrCode\":\"communication-profile\"",
        1,
    );
    assert_ne!(edited, file);
    let summary = run_boss(&edited, &Filter::none());
    assert_eq!(summary.failed.len(), 1, "{:?}", summary.failed);
    assert_eq!(summary.counts.executed, summary.counts.total);
}

#[test]
fn aic_vector_runs_only_the_matching_cases_and_counts_the_rest() {
    let filter = Filter::matching("Council");
    let summary = run_boss(&read("boss-policy-v1.json"), &filter);
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    let counts = summary.counts;
    assert!(counts.executed > 0 && counts.filtered > 0, "{counts:?}");
    counts.report("boss-policy-v1.json", &filter);
}
