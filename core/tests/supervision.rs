//! Runs vectors/orc-supervision-v1.json through the core's operations by name
//! (`contract::call_json`, what the C export calls): each case names its operation, its
//! arguments (JSON pointers into the file) and the TypeScript core's outcome. Reports executed
//! and skipped cases, fails when any case is neither (nor filtered by `AIC_VECTOR`, matched
//! against the case id), and checks that the file hashes to `SUPERVISION_VECTORS_HASH`.

#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::boss::supervision::vectors;
use agent_intercom_core::canonical::canonical_json_of_text;
use agent_intercom_core::contract::{Js, call_json};
use vector_filter::{Counts, Filter};

fn read() -> String {
    let path = format!(
        "{}/../vectors/orc-supervision-v1.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
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

/// Runs one case; `Err` says how its outcome differed from the TypeScript core's.
fn case(doc: &Js, c: &Js) -> Result<(), String> {
    let op = text(c, "op").expect("an op");
    let Some(Js::Array(pointers)) = c.get("args") else {
        panic!("no args")
    };
    let args: Vec<&Js> = pointers
        .items
        .iter()
        .flatten()
        .map(|p| at(doc, p.as_str().expect("a pointer")))
        .collect();
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
