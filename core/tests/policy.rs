//! Runs vectors/policy-v2.json, the policy kernel's golden vectors, through the core twice: the
//! typed [`policy::authorize`] and the `policy.stateForVector` + `policy.authorize` operations
//! the C and Node bindings call. Prints executed and skipped counts and fails when any vector is
//! neither (nor filtered by `AIC_VECTOR`).

#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::contract::Js;
use agent_intercom_core::policy::vectors::{self, PolicyVector};
use agent_intercom_core::policy::{self, POLICY_SEMANTICS_VERSION};
use agent_intercom_core::registry::call_json;
use vector_filter::{Counts, Filter};

/// The value TypeScript publishes as `POLICY_SEMANTICS_HASH` (the known answer; the core never
/// uses this literal, it hashes the file).
const PUBLISHED_HASH: &str = "f3b00e503631bc91123aedfbcf1df72cc9913e1893c09728b2c598f3dcdfdfe0";

fn read() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/policy-v2.json");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The decision label the operations give for a vector, through the JSON entry C uses.
fn decide_by_operation(vector_json: &str) -> Result<(bool, String), String> {
    let state = call_json("policy.stateForVector", &format!("[{vector_json}]"))
        .map_err(|e| e.to_string())?;
    let state = state
        .strip_prefix(r#"{"ok":true,"value":"#)
        .and_then(|s| s.strip_suffix('}'))
        .ok_or(format!("stateForVector: {state}"))?;
    let vector = Js::parse_json(vector_json).unwrap();
    let field = |key: &str| vector.get(key).and_then(|v| v.to_json());
    let mut args = format!(
        "[{state},{},{},{}",
        field("actorId").unwrap(),
        field("action").unwrap(),
        field("targetId").unwrap()
    );
    if let Some(context) = field("context") {
        args += &format!(",{context}");
    }
    args.push(']');
    let out = call_json("policy.authorize", &args).map_err(|e| e.to_string())?;
    let allowed = out.contains(r#""allowed":true"#);
    let label = out
        .split(if allowed {
            r#""reason":""#
        } else {
            r#""code":""#
        })
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .ok_or(format!("authorize: {out}"))?;
    Ok((allowed, label.to_string()))
}

fn check(vector: &PolicyVector, vector_json: &str) -> Result<(), String> {
    let want = (
        vector.expected_allowed,
        vector.expected_reason_or_code.clone(),
    );
    let decision = vector.decide();
    let typed = (decision.is_allowed(), decision.label().to_string());
    if typed != want {
        return Err(format!("authorize gave {typed:?}, expected {want:?}"));
    }
    let by_op = decide_by_operation(vector_json)?;
    if by_op != want {
        return Err(format!(
            "policy.authorize gave {by_op:?}, expected {want:?}"
        ));
    }
    Ok(())
}

/// The vectors of a corpus text with each one's own JSON text.
fn cases(text: &str) -> Vec<(PolicyVector, String)> {
    let parsed = vectors::parse(text).expect("the corpus parses");
    let doc = Js::parse_json(text).unwrap();
    let Js::Array(list) = doc.get("vectors").unwrap() else {
        panic!("vectors is an array")
    };
    let texts = list
        .items
        .iter()
        .map(|v| v.as_ref().unwrap().to_json().unwrap());
    parsed.into_iter().zip(texts).collect()
}

fn run(text: &str, filter: &Filter) -> (Counts, Vec<(String, String)>) {
    let cases = cases(text);
    let mut counts = Counts::new(cases.len());
    let mut failed = Vec::new();
    for (vector, json) in &cases {
        if !filter.selects(&vector.name) {
            counts.filtered += 1;
            continue;
        }
        // Every policy vector is a pure decision: none is skipped.
        if let Err(why) = check(vector, json) {
            failed.push((vector.name.clone(), why));
        }
        counts.executed += 1;
    }
    (counts, failed)
}

#[test]
fn policy_vectors_execute() {
    let filter = Filter::from_env();
    let (counts, failed) = run(&read(), &filter);
    counts.report("policy-v2.json", &filter);
    assert!(failed.is_empty(), "failures: {failed:#?}");
    if !filter.active() {
        assert_eq!((counts.executed, counts.skipped), (12, 0));
    }
}

#[test]
fn the_file_is_the_published_corpus() {
    let text = read();
    assert_eq!(
        text,
        vectors::VECTORS_JSON,
        "core/data/policy-v2.json is stale"
    );
    assert_eq!(vectors::hash_of(&text), PUBLISHED_HASH);
    assert_eq!(vectors::semantics_hash(), PUBLISHED_HASH);
    assert_eq!(POLICY_SEMANTICS_VERSION, 2);
    assert_eq!(vectors::POLICY_VECTOR_SCHEMA_VERSION, 2);
    assert!(text.starts_with(r#"{"version":2,"vectors":[{"name":"#));
    assert!(
        !text.ends_with('\n'),
        "the hashed text has no final newline"
    );
    assert_eq!(vectors::vectors().len(), 12);
    let constants = call_json("policy.constants", "[]").unwrap();
    assert!(constants.contains(&format!(r#""POLICY_SEMANTICS_HASH":"{PUBLISHED_HASH}""#)));
    assert!(constants.contains(&format!(r#""corpus":{text}}}"#)));
}

#[test]
fn the_runner_reports_a_wrong_expectation() {
    let text = read().replacen(
        r#""expectedReasonOrCode":"local-public""#,
        r#""expectedReasonOrCode":"self""#,
        1,
    );
    assert_ne!(vectors::hash_of(&text), PUBLISHED_HASH);
    let (counts, failed) = run(&text, &Filter::none());
    assert_eq!(counts.executed, 12);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].0, "local sessions remain public");
}

#[test]
fn the_filter_selects_by_name() {
    let (counts, failed) = run(&read(), &Filter::matching("stale"));
    assert!(failed.is_empty());
    assert_eq!((counts.executed, counts.filtered), (1, 11));
}

#[test]
fn revocation_turns_every_vector_actor_away() {
    // A property over the corpus: once the actor's subtree is revoked, nothing is allowed.
    for vector in vectors::vectors() {
        let revoked = policy::revoke_subtree(&vector.state(), &vector.actor_id).unwrap();
        let decision = policy::authorize(
            &revoked.state,
            &vector.actor_id,
            vector.action,
            &vector.target_id,
            &Default::default(),
        );
        assert!(!decision.is_allowed(), "{}", vector.name);
    }
}
