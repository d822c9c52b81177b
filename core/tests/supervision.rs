//! Runs vectors/orc-supervision-v1.json through the core's operations by name
//! (`registry::call_json`, what the C export calls): each case names its operation, its
//! arguments (JSON pointers into the file) and the TypeScript core's outcome. Reports executed
//! and skipped cases, fails when any case is neither (nor filtered by `AIC_VECTOR`, matched
//! against the case id), and checks that the file hashes to `SUPERVISION_VECTORS_HASH`.
//!
//! Then core/tests/data/supervision_cases.json: 1,656 edits of the corpus's records (members
//! deleted or replaced, migration evidence re-signed), each with the TypeScript core's outcome
//! (see core/tests/data/gen-supervision-cases.mjs for the format).

#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::boss::supervision::vectors;
use agent_intercom_core::canonical::canonical_json_of_text;
use agent_intercom_core::contract::Js;
use agent_intercom_core::registry::call_json;
use vector_filter::{Counts, Filter};

fn read_path(relative: &str) -> String {
    let path = format!("{}/{relative}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn read() -> String {
    read_path("../vectors/orc-supervision-v1.json")
}

/// The value a JSON pointer (`/a/0/b`) names in the document.
fn at<'d>(doc: &'d Js, pointer: &str) -> &'d Js {
    pointer
        .split('/')
        .skip(1)
        .fold(doc, |value, token| match value {
            Js::Array(list) => list.items[token.parse::<usize>().expect("an index")]
                .as_ref()
                .expect("no hole"),
            other => other
                .get(token)
                .unwrap_or_else(|| panic!("nothing at {pointer}")),
        })
}

fn canonical(value: &Js) -> String {
    canonical_json_of_text(&value.to_json().expect("plain JSON")).expect("canonical data")
}

fn text<'a>(v: &'a Js, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Js::as_str)
}

/// Runs one case of the corpus file; `Err` says how its outcome differed.
fn case(doc: &Js, c: &Js) -> Result<(), String> {
    let Some(Js::Array(pointers)) = c.get("args") else {
        panic!("no args")
    };
    let args: Vec<&Js> = pointers
        .items
        .iter()
        .flatten()
        .map(|p| at(doc, p.as_str().expect("a pointer")))
        .collect();
    check(c, &args)
}

/// Calls the case's operation with `args` and compares the answer with its outcome.
fn check(c: &Js, args: &[&Js]) -> Result<(), String> {
    let op = text(c, "op").expect("an op");
    let texts: Vec<String> = args.iter().map(|a| a.to_json().unwrap()).collect();
    let answer = call_json(op, &format!("[{}]", texts.join(","))).expect("a known operation");
    let answer = Js::parse_json(&answer).expect("the answer is JSON");
    let value = answer.get("value");
    let outcome = c.get("outcome").expect("an outcome");
    let got = || format!("got {answer:?}");
    if let Some(Js::Object(_)) = outcome.get("throws") {
        let want = outcome.get("throws").unwrap();
        let error = answer.get("error").ok_or_else(got)?;
        return (text(error, "class") == text(want, "class")
            && text(error, "message") == text(want, "message"))
        .then_some(())
        .ok_or_else(|| format!("expected {want:?}, {}", got()));
    }
    let value = value.ok_or_else(got)?;
    let expected = if let Some(index) = outcome.get("equalsArg").and_then(Js::safe_integer) {
        args[index as usize]
    } else if let Some(index) = outcome.get("validStoreRecordOf").and_then(Js::safe_integer) {
        if value.get("ok") != Some(&Js::Bool(true)) || text(value, "status") != Some("valid") {
            return Err(got());
        }
        return (canonical(value.get("value").ok_or_else(got)?) == canonical(args[index as usize]))
            .then_some(())
            .ok_or_else(got);
    } else {
        outcome.get("value").expect("a value outcome")
    };
    (canonical(value) == canonical(expected))
        .then_some(())
        .ok_or_else(|| format!("expected {}, {}", canonical(expected), got()))
}

struct Summary {
    counts: Counts,
    failed: Vec<(String, String)>,
}

fn run(file: &str, filter: &Filter) -> Summary {
    let doc = Js::parse_json(file).expect("the corpus is JSON");
    assert_eq!(text(&doc, "corpus"), Some(vectors::HASH_DOMAIN));
    let Some(Js::Array(list)) = doc.get("cases") else {
        panic!("no cases")
    };
    let cases: Vec<&Js> = list.items.iter().flatten().collect();
    assert_eq!(
        doc.get("count").and_then(Js::safe_integer),
        Some(cases.len() as i64),
        "count field"
    );
    let mut summary = Summary {
        counts: Counts::new(cases.len()),
        failed: Vec::new(),
    };
    for c in cases {
        let id = text(c, "id").expect("every case has an id").to_string();
        if !filter.selects(&id) {
            summary.counts.filtered += 1;
            continue;
        }
        summary.counts.executed += 1;
        if let Err(why) = case(&doc, c) {
            summary.failed.push((id, why));
        }
    }
    summary
}

#[test]
fn orc_supervision_v1_cases() {
    let filter = Filter::from_env();
    let summary = run(&read(), &filter);
    assert!(summary.failed.is_empty(), "failures {:#?}", summary.failed);
    summary.counts.report("orc-supervision-v1.json", &filter);
}

#[test]
fn the_corpus_hashes_to_the_published_value() {
    assert_eq!(
        vectors::VECTORS_JSON,
        read(),
        "the crate embeds the shipped file"
    );
    assert_eq!(
        vectors::vectors_hash(),
        "6795156a761aa7fa404c06657e7ca3438a99b1a7e4d2919308379a5448e14b33"
    );
    let doc = Js::parse_json(&read()).unwrap();
    let semantics = doc.get("semantics").unwrap().to_json().unwrap();
    let args = format!(r#"["{}",{semantics}]"#, vectors::HASH_DOMAIN);
    let answer = call_json("canonical.canonicalHash", &args).unwrap();
    assert_eq!(
        answer,
        format!(r#"{{"ok":true,"value":"{}"}}"#, vectors::vectors_hash())
    );
    assert_eq!(text(&doc, "semanticsHash"), Some(vectors::vectors_hash()));
}

#[test]
fn a_changed_case_fails_the_runner() {
    let file = read();
    // The last mention is the outcome of the first ACL case (the first is its vector's data).
    let at = file.rfind("\"owner_to_worker\"").expect("an ACL outcome");
    let edited = format!("{}\"boss_to_manager\"{}", &file[..at], &file[at + 17..]);
    assert_ne!(edited, file);
    let summary = run(&edited, &Filter::none());
    assert_eq!(summary.failed.len(), 1, "{:?}", summary.failed);
    assert_eq!(summary.counts.executed, summary.counts.total);
}

#[test]
fn aic_vector_runs_only_the_matching_cases_and_counts_the_rest() {
    let filter = Filter::matching("acl/");
    let summary = run(&read(), &filter);
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    assert_eq!(summary.counts.executed, 26);
    summary.counts.report("orc-supervision-v1.json", &filter);
}

/// The members of an object or the elements of an array, by key.
fn child<'v>(value: &'v mut Js, key: &str) -> &'v mut Js {
    match value {
        Js::Array(list) => list.items[key.parse::<usize>().expect("an index")]
            .as_mut()
            .expect("no hole"),
        Js::Object(object) => {
            &mut object
                .members
                .iter_mut()
                .find(|(k, _)| k.text == key)
                .unwrap_or_else(|| panic!("no member {key}"))
                .1
        }
        other => panic!("{other:?} has no {key}"),
    }
}

fn walk<'v>(mut value: &'v mut Js, path: &[&str]) -> &'v mut Js {
    for key in path {
        value = child(value, key);
    }
    value
}

/// Sets (in place, or appended) or deletes an object member.
fn set_member(object: &mut Js, key: &str, new: Option<Js>) {
    let Js::Object(object) = object else {
        panic!("not an object: {object:?}")
    };
    let slot = object.members.iter().position(|(k, _)| k.text == key);
    match (slot, new) {
        (Some(i), Some(v)) => object.members[i].1 = v,
        (None, Some(v)) => object.members.push((
            agent_intercom_core::contract::JsStr {
                text: key.to_string(),
                lone: None,
            },
            v,
        )),
        (Some(i), None) => {
            object.members.remove(i);
        }
        (None, None) => {}
    }
}

fn strings(value: Option<&Js>) -> Vec<&str> {
    match value {
        Some(Js::Array(list)) => list.items.iter().flatten().filter_map(Js::as_str).collect(),
        _ => Vec::new(),
    }
}

/// What an edit case's argument stands for (see gen-supervision-cases.mjs).
fn build(doc: &Js, arg: &Js) -> Js {
    if let Some(value) = arg.get("value") {
        return value.clone();
    }
    let mut value = at(doc, text(arg, "vector").expect("a pointer")).clone();
    if let Some(Js::Array(edits)) = arg.get("edits") {
        for edit in edits.items.iter().flatten() {
            let path = strings(edit.get("at"));
            let (key, parent) = path.split_last().expect("a path");
            let new = edit.get("set").cloned();
            set_member(walk(&mut value, parent), key, new);
        }
    }
    if arg.get("resign").is_some() {
        let evidence = walk(&mut value, &strings(arg.get("resign")));
        let mut body = evidence.clone();
        set_member(&mut body, "evidenceDigest", None);
        let answer = call_json(
            "boss.rebindMigrationEvidenceDigest",
            &format!("[{}]", body.to_json().expect("plain JSON")),
        )
        .unwrap();
        let answer = Js::parse_json(&answer).unwrap();
        if let Some(digest) = answer.get("value") {
            set_member(evidence, "evidenceDigest", Some(digest.clone()));
        }
    }
    value
}

#[test]
fn supervision_edit_cases() {
    let filter = Filter::from_env();
    let corpus = Js::parse_json(&read()).unwrap();
    let file = Js::parse_json(&read_path("tests/data/supervision_cases.json")).unwrap();
    let Some(Js::Array(list)) = file.get("cases") else {
        panic!("no cases")
    };
    let cases: Vec<&Js> = list.items.iter().flatten().collect();
    assert_eq!(
        file.get("count").and_then(Js::safe_integer),
        Some(cases.len() as i64)
    );
    assert_eq!(cases.len(), 1656);
    let mut counts = Counts::new(cases.len());
    let mut failed = Vec::new();
    for c in cases {
        let id = text(c, "id").expect("an id");
        if !filter.selects(id) {
            counts.filtered += 1;
            continue;
        }
        counts.executed += 1;
        let Some(Js::Array(args)) = c.get("args") else {
            panic!("no args")
        };
        let built: Vec<Js> = args
            .items
            .iter()
            .flatten()
            .map(|a| build(&corpus, a))
            .collect();
        if let Err(why) = check(c, &built.iter().collect::<Vec<_>>()) {
            failed.push((id.to_string(), why));
        }
    }
    assert!(
        failed.is_empty(),
        "{} failures {:#?}",
        failed.len(),
        &failed[..failed.len().min(5)]
    );
    counts.report("supervision_cases.json", &filter);
}
