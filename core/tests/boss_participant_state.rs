//! Runs vectors/boss-participant-state-v1.json and
//! vectors/boss-participant-state-transition-v1.json through the core's operations by name
//! (`registry::call_json`, what the C export calls), as the C and Node runners do. The state
//! corpus's cases are its migration vectors, its stopping reconciliations and its health event;
//! the transition corpus's are its transition vectors, and its two tables must be the core's.
//! Each runner reports executed and skipped cases and fails when any case is neither (nor
//! filtered by `AIC_VECTOR`, matched against the case id).

#[path = "support/contract_call.rs"]
mod contract_call;
#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::boss::participant::vectors;
use agent_intercom_core::contract::Js;
use contract_call::call;
use vector_filter::{Counts, Filter};

const STATE_FILE: &str = "boss-participant-state-v1.json";
const TRANSITION_FILE: &str = "boss-participant-state-transition-v1.json";
const PUBLISHED_STATE_HASH: &str =
    "0da19269f0c2befd9b22b8d146d6bd30450f3f0d64598148fd9317f36a5fc920";
const PUBLISHED_TRANSITION_HASH: &str =
    "143fb362364d0742df565e8a02f778a493007e799c429cec8468f38e6520c86a";

fn read(name: &str) -> String {
    let path = format!("{}/../vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn list<'a>(doc: &'a Js, key: &str) -> Vec<&'a Js> {
    match doc.get(key) {
        Some(Js::Array(a)) => a.items.iter().flatten().collect(),
        _ => panic!("the corpus has no {key}"),
    }
}

fn member<'a>(v: &'a Js, key: &str) -> &'a Js {
    v.get(key).unwrap_or(&Js::Undefined)
}

fn name(v: &Js) -> String {
    member(v, "name")
        .as_str()
        .expect("a named vector")
        .to_string()
}

/// Fails unless `got` is `want` member for member, in the same order.
fn same(what: &str, got: &Js, want: &Js) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: expected {want:?}, got {got:?}"))
    }
}

fn answer(op: &str, args: &[&Js]) -> Result<Js, String> {
    call(op, args).map_err(|r| format!("{op}: {} {}", r.class, r.message))
}

/// A migration vector: the projection is `expected`, which reads back unchanged and is not
/// dispatchable.
fn migration_case(v: &Js) -> Result<(), String> {
    let expected = member(v, "expected");
    let migrated = answer("boss.migrateLegacyWorkerRecordV1", &[member(v, "input")])?;
    same("migrated", &migrated, expected)?;
    let parsed = answer("boss.parseMigratedWorkerRecordV2", &[expected])?;
    same("read back", &parsed, expected)?;
    let dispatch = answer("boss.canDispatchMigratedWorker", &[expected])?;
    same("dispatch", &dispatch, &Js::Bool(false))
}

/// A stopping vector: the settled record has the expected state and reason, keeps the evidence,
/// is complete and writable (not dispatchable), and reads back unchanged.
fn stopping_case(v: &Js) -> Result<(), String> {
    let evidence = member(v, "evidence");
    let settled = answer(
        "boss.reconcileLegacyStoppingWorker",
        &[member(v, "pending"), evidence],
    )?;
    same(
        "state",
        member(&settled, "state"),
        member(v, "expectedState"),
    )?;
    same(
        "reason",
        member(&settled, "reason"),
        member(v, "expectedReason"),
    )?;
    same(
        "evidence",
        member(&settled, "stoppingReconciliation"),
        evidence,
    )?;
    same(
        "status",
        member(&settled, "migrationStatus"),
        &Js::str("complete"),
    )?;
    same("readOnly", member(&settled, "readOnly"), &Js::Bool(false))?;
    same(
        "dispatchAllowed",
        member(&settled, "dispatchAllowed"),
        &Js::Bool(false),
    )?;
    let parsed = answer("boss.parseMigratedWorkerRecordV2", &[&settled])?;
    same("read back", &parsed, &settled)
}

fn health_case(v: &Js) -> Result<(), String> {
    let parsed = answer("boss.parseParticipantHealthEventV1", &[v])?;
    same("health event", &parsed, v)
}

/// A transition vector: accepted, and its context reads back unchanged.
fn transition_case(v: &Js) -> Result<(), String> {
    let input = member(v, "input");
    let accepted = answer("boss.validateParticipantStateTransition", &[input])?;
    same("validate", &accepted, &Js::Undefined)?;
    let parsed = answer("boss.parseParticipantStateTransitionContextV1", &[input])?;
    same("context", &parsed, input)
}

/// One case of a file: its id and how it runs.
type Case<'a> = (String, Box<dyn Fn() -> Result<(), String> + 'a>);

fn state_cases(doc: &Js) -> Vec<Case<'_>> {
    let mut cases: Vec<Case<'_>> = Vec::new();
    for v in list(doc, "migrationVectors") {
        cases.push((
            format!("migration: {}", name(v)),
            Box::new(move || migration_case(v)),
        ));
    }
    for v in list(doc, "stoppingReconciliationVectors") {
        cases.push((
            format!("stopping: {}", name(v)),
            Box::new(move || stopping_case(v)),
        ));
    }
    let event = member(doc, "healthEvent");
    cases.push(("health event".into(), Box::new(move || health_case(event))));
    cases
}

fn transition_cases(doc: &Js) -> Vec<Case<'_>> {
    list(doc, "transitionVectors")
        .into_iter()
        .map(|v| -> Case<'_> { (name(v), Box::new(move || transition_case(v))) })
        .collect()
}

#[derive(Debug, Default)]
struct Summary {
    counts: Counts,
    failed: Vec<(String, String)>,
}

/// Runs the cases of one corpus file, counting what ran and what was filtered; the file's
/// `count` must be its number of cases.
fn run(text: &str, cases: fn(&Js) -> Vec<Case<'_>>, filter: &Filter) -> Summary {
    let doc = Js::parse_json(text).expect("the corpus is JSON");
    let cases = cases(&doc);
    assert_eq!(
        member(&doc, "count").as_num(),
        Some(cases.len() as f64),
        "count field"
    );
    let mut summary = Summary {
        counts: Counts::new(cases.len()),
        ..Summary::default()
    };
    for (id, case) in cases {
        if !filter.selects(&id) {
            summary.counts.filtered += 1;
            continue;
        }
        summary.counts.executed += 1;
        if let Err(why) = case() {
            summary.failed.push((id, why));
        }
    }
    summary
}

#[test]
fn boss_participant_state_v1_vectors() {
    let filter = Filter::from_env();
    let summary = run(&read(STATE_FILE), state_cases, &filter);
    assert!(summary.failed.is_empty(), "failures {:#?}", summary.failed);
    if !filter.active() {
        assert_eq!(summary.counts.executed, 14);
    }
    summary.counts.report(STATE_FILE, &filter);
}

#[test]
fn boss_participant_state_transition_v1_vectors() {
    let filter = Filter::from_env();
    let summary = run(&read(TRANSITION_FILE), transition_cases, &filter);
    assert!(summary.failed.is_empty(), "failures {:#?}", summary.failed);
    if !filter.active() {
        assert_eq!(summary.counts.executed, 12);
    }
    summary.counts.report(TRANSITION_FILE, &filter);
}

#[test]
fn the_hashes_are_computed_from_the_files_and_are_the_published_ones() {
    // The crate embeds its own copies; they are the shipped files.
    assert_eq!(vectors::STATE_VECTORS_JSON, read(STATE_FILE));
    assert_eq!(vectors::TRANSITION_VECTORS_JSON, read(TRANSITION_FILE));
    for (op, file, published) in [
        (
            "boss.participantStateVectors",
            STATE_FILE,
            PUBLISHED_STATE_HASH,
        ),
        (
            "boss.participantStateTransitionVectors",
            TRANSITION_FILE,
            PUBLISHED_TRANSITION_HASH,
        ),
    ] {
        let computed = call(op, &[]).unwrap();
        let doc = Js::parse_json(&read(file)).unwrap();
        assert_eq!(member(&computed, "semanticsHash").as_str(), Some(published));
        assert_eq!(member(&doc, "semanticsHash").as_str(), Some(published));
        assert_eq!(member(&computed, "corpus"), &doc);
    }
    let constants = call("boss.constants", &[]).unwrap();
    assert_eq!(
        member(&constants, "PARTICIPANT_STATE_VECTORS_HASH").as_str(),
        Some(PUBLISHED_STATE_HASH)
    );
    assert_eq!(
        member(&constants, "PARTICIPANT_STATE_TRANSITION_VECTORS_HASH").as_str(),
        Some(PUBLISHED_TRANSITION_HASH)
    );
    let corpus = member(&constants, "BOSS_RUN_FEATURE_SEMANTICS_CORPUS");
    assert_eq!(
        member(corpus, "participantStateVectorsHash").as_str(),
        Some(PUBLISHED_STATE_HASH)
    );
    assert_eq!(
        member(corpus, "participantStateTransitionVectorsHash").as_str(),
        Some(PUBLISHED_TRANSITION_HASH)
    );
}

#[test]
fn the_transition_file_holds_the_cores_tables() {
    let doc = Js::parse_json(&read(TRANSITION_FILE)).unwrap();
    let constants = call("boss.constants", &[]).unwrap();
    assert_eq!(
        member(&doc, "sameGenerationTransitionTable"),
        member(&constants, "PARTICIPANT_STATE_TRANSITION_TABLE")
    );
    assert_eq!(
        member(&doc, "newGenerationTransitionTable"),
        member(&constants, "PARTICIPANT_NEW_GENERATION_TRANSITIONS")
    );
}

#[test]
fn a_changed_vector_fails_the_runner_and_changes_the_hash() {
    let file = read(STATE_FILE);
    let edited = file.replacen(
        "\"reason\":\"legacy_needs_attention\"",
        "\"reason\":\"needs_attention\"",
        1,
    );
    assert_ne!(edited, file);
    let summary = run(&edited, state_cases, &Filter::none());
    assert_eq!(summary.failed.len(), 1, "{:?}", summary.failed);
    assert_eq!(summary.counts.executed, summary.counts.total);
    let domain = vectors::PARTICIPANT_STATE_VECTOR_HASH_DOMAIN;
    let members = vectors::STATE_CORPUS_MEMBERS;
    assert_eq!(
        vectors::corpus_hash(domain, &file, members),
        PUBLISHED_STATE_HASH
    );
    assert_ne!(
        vectors::corpus_hash(domain, &edited, members),
        PUBLISHED_STATE_HASH
    );
}

#[test]
fn aic_vector_runs_only_the_matching_cases_and_counts_the_rest() {
    let filter = Filter::matching("stopping:");
    let summary = run(&read(STATE_FILE), state_cases, &filter);
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    assert_eq!((summary.counts.executed, summary.counts.filtered), (4, 10));
    summary.counts.report(STATE_FILE, &filter);
}
