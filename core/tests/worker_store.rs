//! The worker-store migration: vectors/worker-store-migration-v2.json (the TypeScript core's
//! corpus, with its hash computed from the file) and tests/data/worker_store_cases.json (this
//! repository's cases, each with the outcome the TypeScript core 0.2.0 gives it), both through
//! `registry::call_json` (what the C export calls), plus the snapshot-only inputs JSON cannot
//! carry. Each runner counts executed and skipped cases; `AIC_VECTOR=<name or id part>`
//! selects.

#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::boss::feature::semantics;
use agent_intercom_core::boss::{constants, worker_store};
use agent_intercom_core::contract::{Js, JsStr};
use agent_intercom_core::registry::{call_json, call_snapshot};
use vector_filter::{Counts, Filter};

/// The published `FULL_WORKER_STORE_MIGRATION_VECTORS_HASH` (inventory §1.3), a known answer.
const PUBLISHED_HASH: &str = "dfc3680c3b085a0a7a53266abe309d5710a181b7831d2582998dd38e76dca2bf";

fn read(path: &str) -> String {
    let path = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn corpus_file() -> String {
    read("../vectors/worker-store-migration-v2.json")
}

fn items(value: Option<&Js>) -> Vec<&Js> {
    match value {
        Some(Js::Array(a)) => a.items.iter().flatten().collect(),
        _ => panic!("not an array"),
    }
}

fn text<'a>(value: &'a Js, key: &str) -> &'a str {
    value.get(key).and_then(Js::as_str).unwrap_or("")
}

/// `op` of one argument: `Ok(value)` or `Err(error object)`.
fn call(op: &str, arg: &Js) -> Result<Js, Js> {
    let args = format!("[{}]", arg.to_json().expect("a JSON argument"));
    let answer = call_json(&format!("boss.{op}"), &args).expect("a known operation");
    let answer = Js::parse_json(&answer).expect("the answer is JSON");
    match answer.get("ok") {
        Some(Js::Bool(true)) => Ok(answer.get("value").cloned().unwrap_or(Js::Undefined)),
        _ => Err(answer.get("error").cloned().expect("a failure")),
    }
}

/// The member order of objects counts (the TypeScript member order is part of the answer).
fn same(got: &Js, want: &Js) -> Result<(), String> {
    if got == want {
        return Ok(());
    }
    Err(format!(
        "expected {}, got {}",
        want.to_json().unwrap_or_default(),
        got.to_json().unwrap_or_default()
    ))
}

/// One corpus vector: the input reads back equal, migrates to `expected`, which reads back
/// equal.
fn migration_vector(v: &Js) -> Result<(), String> {
    let input = v.get("input").ok_or("no input")?;
    let expected = v.get("expected").ok_or("no expected")?;
    let parsed =
        call("parseFullWorkerStoreMigrationInputV1", input).map_err(|e| format!("{e:?}"))?;
    same(&parsed, input)?;
    let migrated = call("migrateFullWorkerStoreV1", input).map_err(|e| format!("{e:?}"))?;
    same(&migrated, expected)?;
    let reread = call("parseWorkerStoreRecordV2", expected).map_err(|e| format!("{e:?}"))?;
    same(&reread, expected)?;
    if expected
        .get("worker")
        .and_then(|w| w.get("bossRunId"))
        .is_some()
    {
        return Err("a migrated worker has a bossRunId".into());
    }
    Ok(())
}

/// One strict rejection vector: refused with the error the TypeScript core gives.
fn rejection_vector(v: &Js, want: &Js) -> Result<(), String> {
    match call(
        "parseWorkerStoreRecordV2",
        v.get("value").ok_or("no value")?,
    ) {
        Ok(_) => Err("accepted".into()),
        Err(e) => {
            let fields = ["class", "path", "message"];
            if fields.iter().all(|k| text(&e, k) == text(want, k)) {
                Ok(())
            } else {
                Err(format!("expected {want:?}, got {e:?}"))
            }
        }
    }
}

#[derive(Debug, Default)]
struct Summary {
    counts: Counts,
    failed: Vec<(String, String)>,
}

fn run_corpus(file: &str, filter: &Filter) -> Summary {
    let doc = Js::parse_json(file).expect("the corpus is JSON");
    assert_eq!(text(&doc, "corpus"), worker_store::VECTOR_HASH_DOMAIN);
    let vectors = items(doc.get("vectors"));
    let rejections = items(doc.get("strictRejectionVectors"));
    let errors = items(doc.get("strictRejectionErrors"));
    assert_eq!(
        doc.get("count").and_then(Js::as_num),
        Some(vectors.len() as f64)
    );
    assert_eq!(
        doc.get("strictRejectionCount").and_then(Js::as_num),
        Some(rejections.len() as f64)
    );
    assert_eq!(
        errors.len(),
        rejections.len(),
        "one error per rejection vector"
    );
    let mut summary = Summary {
        counts: Counts::new(vectors.len() + rejections.len()),
        ..Summary::default()
    };
    let mut one = |name: &str, result: &dyn Fn() -> Result<(), String>| {
        if !filter.selects(name) {
            summary.counts.filtered += 1;
            return;
        }
        summary.counts.executed += 1;
        if let Err(why) = result() {
            summary.failed.push((name.to_string(), why));
        }
    };
    for v in vectors {
        one(text(v, "name"), &|| migration_vector(v));
    }
    for (v, want) in rejections.into_iter().zip(errors) {
        assert_eq!(text(v, "name"), text(want, "name"));
        one(text(v, "name"), &|| rejection_vector(v, want));
    }
    summary
}

#[test]
fn worker_store_migration_v2_vectors() {
    let filter = Filter::from_env();
    let summary = run_corpus(&corpus_file(), &filter);
    assert!(summary.failed.is_empty(), "failures {:#?}", summary.failed);
    summary
        .counts
        .report("worker-store-migration-v2.json", &filter);
}

#[test]
fn the_hash_is_computed_from_the_file_and_embedded_by_the_boss_corpus() {
    let file = corpus_file();
    assert_eq!(
        worker_store::VECTORS_JSON,
        file,
        "the crate embeds the shipped file"
    );
    assert_eq!(worker_store::vectors_hash(), PUBLISHED_HASH);
    assert_eq!(worker_store::vector_version(), 2);
    let doc = Js::parse_json(&file).unwrap();
    assert_eq!(text(&doc, "semanticsHash"), PUBLISHED_HASH);
    // The feature-semantics corpus and the constants take it from here.
    let corpus = Js::parse_json(&semantics::feature_semantics_corpus_json()).unwrap();
    assert_eq!(
        text(&corpus, "fullWorkerStoreMigrationVectorsHash"),
        PUBLISHED_HASH
    );
    let constants = Js::parse_json(&constants::constants_json()).unwrap();
    assert_eq!(
        text(&constants, "FULL_WORKER_STORE_MIGRATION_VECTORS_HASH"),
        PUBLISHED_HASH
    );
    assert_eq!(
        constants
            .get("FULL_WORKER_STORE_MIGRATION_VECTOR_VERSION")
            .and_then(Js::as_num),
        Some(2.0)
    );
    assert_eq!(
        text(&constants, "FULL_WORKER_STORE_V2_RECORD_VERSION"),
        "orc.worker-store-record.v2"
    );
    assert_eq!(
        constants
            .get("FULL_WORKER_STORE_MIGRATION_VERSION")
            .and_then(Js::as_num),
        Some(1.0)
    );
    // The Node module's view: the computed hash with the file as shipped.
    let answer = call("workerStoreMigrationVectors", &Js::Null).unwrap();
    assert_eq!(text(&answer, "semanticsHash"), PUBLISHED_HASH);
    assert_eq!(
        text(&answer, "hashDomain"),
        worker_store::VECTOR_HASH_DOMAIN
    );
    assert_eq!(answer.get("corpus"), Some(&doc));
}

#[test]
fn a_changed_vector_changes_the_hash_and_fails_the_runner() {
    let file = corpus_file();
    let edited = file.replacen("\"processId\":10003", "\"processId\":10004", 1);
    assert_ne!(edited, file);
    let (_, hash) = worker_store::corpus_version_and_hash(&edited);
    assert_ne!(hash, PUBLISHED_HASH);
    let summary = run_corpus(&edited, &Filter::none());
    assert_eq!(summary.failed.len(), 1, "{:?}", summary.failed);
    assert_eq!(summary.counts.executed, summary.counts.total);
    // The unhashed members do not move the hash.
    let described = file.replacen("\"description\": \"", "\"description\": \"(edited) ", 1);
    assert_ne!(described, file);
    assert_eq!(
        worker_store::corpus_version_and_hash(&described).1,
        PUBLISHED_HASH
    );
}

#[test]
fn aic_vector_runs_only_the_matching_cases_and_counts_the_rest() {
    let filter = Filter::matching("notice");
    let summary = run_corpus(&corpus_file(), &filter);
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    let counts = summary.counts;
    assert!(counts.executed > 0 && counts.filtered > 0, "{counts:?}");
    counts.report("worker-store-migration-v2.json", &filter);
}

/// `bases[base]` after the case's edits (a set keeps an existing key's place and appends a
/// new one; a path alone deletes).
fn case_argument(doc: &Js, case: &Js) -> Js {
    if let Some(arg) = case.get("arg") {
        return arg.clone();
    }
    let mut value = doc
        .get("bases")
        .and_then(|b| b.get(text(case, "base")))
        .cloned()
        .expect("a known base");
    for edit in items(case.get("edits")) {
        let parts = items(Some(edit));
        let path: Vec<&str> = items(Some(parts[0]))
            .iter()
            .map(|k| k.as_str().unwrap())
            .collect();
        let mut at = &mut value;
        for key in &path[..path.len() - 1] {
            let Js::Object(o) = at else {
                panic!("edit through a non-object")
            };
            at = &mut o
                .members
                .iter_mut()
                .find(|(k, _)| k.text == *key)
                .unwrap()
                .1;
        }
        let Js::Object(o) = at else {
            panic!("edit of a non-object")
        };
        let last = path[path.len() - 1];
        let slot = o.members.iter().position(|(k, _)| k.text == last);
        match (parts.get(1), slot) {
            (None, Some(i)) => {
                o.members.remove(i);
            }
            (None, None) => {}
            (Some(v), Some(i)) => o.members[i].1 = (*v).clone(),
            (Some(v), None) => o.members.push((
                JsStr {
                    text: last.to_string(),
                    lone: None,
                },
                (*v).clone(),
            )),
        }
    }
    value
}

fn check_case(doc: &Js, case: &Js) -> Result<(), String> {
    let arg = case_argument(doc, case);
    let expect = case.get("expect").ok_or("no expect")?;
    let got = call(text(case, "op"), &arg);
    match (text(expect, "kind"), got) {
        ("error", Err(e)) => {
            let fields = ["class", "path", "message"];
            if fields.iter().all(|k| e.get(k) == expect.get(k)) {
                Ok(())
            } else {
                Err(format!("expected {expect:?}, got {e:?}"))
            }
        }
        ("equal", Ok(v)) => same(&v, &arg),
        ("valid", Ok(v)) => {
            let valid = v.get("ok") == Some(&Js::Bool(true)) && text(&v, "status") == "valid";
            if !valid {
                return Err(format!("not valid: {v:?}"));
            }
            same(v.get("value").unwrap_or(&Js::Undefined), &arg)
        }
        ("value", Ok(v)) => same(&v, expect.get("value").unwrap_or(&Js::Undefined)),
        (kind, got) => Err(format!("expected {kind}, got {got:?}")),
    }
}

#[test]
fn typescript_outcomes() {
    let doc = Js::parse_json(&read("tests/data/worker_store_cases.json")).unwrap();
    let list = items(doc.get("cases"));
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
        if let Err(why) = check_case(&doc, case) {
            failures.push(format!("{id}: {why}"));
        }
    }
    counts.report("worker_store_cases.json", &filter);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn snapshot(op: &str, args: &str) -> String {
    call_snapshot(&format!("boss.{op}"), args).unwrap()
}

#[test]
fn snapshot_only_inputs() {
    let doc = Js::parse_json(&corpus_file()).unwrap();
    let first = items(doc.get("vectors"))[0];
    let input = first.get("input").unwrap().to_json().unwrap();
    let record = first.get("expected").unwrap().to_json().unwrap();
    let with = |json: &str, from: &str, to: &str| {
        assert!(json.contains(from), "{from}");
        format!("[{}]", json.replacen(from, to, 1))
    };
    // An accessor is refused without being read; a proxy is never entered.
    let answer = snapshot(
        "parseFullWorkerStoreMigrationInputV1",
        &with(&input, r#""runtimeId":"runtime-0""#, r#""runtimeId":h"#),
    );
    assert!(
        answer.contains(r#""message":"$.runtime.runtimeId: must be an enumerable data property""#),
        "{answer}"
    );
    let answer = snapshot("parseWorkerStoreRecordV2", "[p]");
    assert!(
        answer.contains(r#""message":"$: must be a plain object""#),
        "{answer}"
    );
    // An optional member that is present but undefined reads as absent...
    let answer = snapshot(
        "parseFullWorkerStoreMigrationInputV1",
        &with(
            &input,
            r#""workspacePath":"/workspace/0""#,
            r#""workspacePath":u"#,
        ),
    );
    assert!(answer.starts_with("j{"), "{answer}");
    assert!(!answer.contains("workspacePath"), "{answer}");
    // ...and a required one is present (so not "is required") but then refused.
    let answer = snapshot(
        "parseFullWorkerStoreMigrationInputV1",
        &with(&input, r#""revision":1"#, r#""revision":u"#),
    );
    assert!(
        answer.contains(r#""message":"$.controller.revision: must be a safe integer >= 0""#),
        "{answer}"
    );
    // In a v2 record, an undefined required member passes the surface's own key check, is
    // dropped with the identity, and is then missing from the group read afresh.
    let answer = snapshot(
        "parseWorkerStoreRecordV2",
        &with(&record, r#""runtimeId":"runtime-0""#, r#""runtimeId":u"#),
    );
    assert!(
        answer.contains(r#""message":"$compatibility.runtime.runtimeId: is required""#),
        "{answer}"
    );
    // -0 is not a safe integer; a hole in the notice ids is refused at its index.
    let answer = snapshot(
        "parseFullWorkerStoreMigrationInputV1",
        &with(
            &input,
            r#""version":1,"worker""#,
            r#""version":-0,"worker""#,
        ),
    );
    assert!(
        answer.contains("$.version: unsupported version: 0"),
        "{answer}"
    );
    let answer = snapshot(
        "parseWorkerStoreRecordV2",
        &with(&record, r#"["notice-0"]"#, r#"["notice-0",_]"#),
    );
    assert!(
        answer.contains("$compatibility.notice.pendingNoticeIds[1]: sparse array holes"),
        "{answer}"
    );
    // The store validators never fail; an accessor version is corrupt (the record check
    // refuses it before the version is looked at).
    let answer = snapshot(
        "validateWorkerStoreRecordV2",
        &with(
            &record,
            r#""version":"orc.worker-store-record.v2""#,
            r#""version":h"#,
        ),
    );
    assert!(
        answer.contains(r#""path":"$.version","message":"$.version: must be an enumerable"#),
        "{answer}"
    );
    let answer = snapshot("validateFullWorkerStoreMigrationInputV1", "[s]");
    assert!(
        answer.starts_with(r#"j{"ok":false,"status":"corrupt""#),
        "{answer}"
    );
}
