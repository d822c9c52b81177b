//! Runs vectors/asks-v1.json through the core's ask-threading rules (`asks::check_ask`). The
//! runner reports executed and skipped cases and fails when any case is neither.

use agent_intercom_core::asks::{self, AskEdge, AskEffect, AskKey, AskRefusal, AskState};
use agent_intercom_core::canonical::{self, Value};

fn read() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/asks-v1.json");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn s<'a>(v: &'a Value<'a>, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

#[derive(Debug, Default)]
struct Summary {
    total: usize,
    executed: usize,
    skipped: usize,
    /// Cases that ran and disagreed: (id, what).
    failed: Vec<(String, String)>,
    /// Cases of a kind this runner does not know: neither executed nor skipped.
    unhandled: Vec<String>,
}

/// The expectation of a case, in the shape `check_ask` answers.
fn expected<'a>(case: &'a Value<'a>) -> Result<Result<AskEffect<'a>, AskRefusal>, String> {
    let e = case.get("expected").ok_or("no expected")?;
    if let Some(code) = s(e, "refused") {
        return AskRefusal::from_code(code)
            .map(Err)
            .ok_or(format!("unknown code {code}"));
    }
    let resolves = match e.get("resolves") {
        Some(Value::Null) => None,
        Some(key) => Some(AskKey {
            asker: s(key, "asker").ok_or("resolves.asker")?,
            message_id: s(key, "messageId").ok_or("resolves.messageId")?,
        }),
        None => return Err("no expected.resolves".into()),
    };
    let opens = match e.get("opens") {
        Some(Value::Bool(b)) => *b,
        _ => return Err("no expected.opens".into()),
    };
    Ok(Ok(AskEffect { resolves, opens }))
}

fn check(case: &Value<'_>) -> Result<(), String> {
    let edges = case
        .get("edges")
        .and_then(Value::as_array)
        .ok_or("no edges")?
        .iter()
        .map(|e| {
            Ok(AskEdge {
                asker: s(e, "asker").ok_or("edge.asker")?,
                message_id: s(e, "messageId").ok_or("edge.messageId")?,
                asked: s(e, "asked").ok_or("edge.asked")?,
                state: s(e, "state")
                    .and_then(AskState::parse)
                    .ok_or("edge.state")?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let send = case.get("send").ok_or("no send")?;
    let reply_to = match send.get("replyTo") {
        Some(Value::Null) | None => None,
        Some(v) => Some(v.as_str().ok_or("send.replyTo")?),
    };
    let expects_reply = matches!(send.get("expectsReply"), Some(Value::Bool(true)));
    let max_open = case
        .get("maxOpenAsks")
        .and_then(Value::as_i64)
        .ok_or("no maxOpenAsks")?;
    let got = asks::check_ask(
        &edges[..],
        s(send, "from").ok_or("send.from")?,
        s(send, "to").ok_or("send.to")?,
        reply_to,
        expects_reply,
        usize::try_from(max_open).map_err(|_| "maxOpenAsks")?,
    );
    let want = expected(case)?;
    if got == want {
        Ok(())
    } else {
        Err(format!("expected {want:?}, got {got:?}"))
    }
}

fn run(text: &str) -> Summary {
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
        total: cases.len(),
        ..Summary::default()
    };
    let mut ids = std::collections::BTreeSet::new();
    for case in cases {
        let id = s(case, "id").expect("every case has an id").to_string();
        assert!(ids.insert(id.clone()), "duplicate id {id}");
        match s(case, "kind") {
            Some("check") => {
                summary.executed += 1;
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
    let summary = run(&read());
    println!(
        "asks-v1.json: {} cases, {} executed, {} skipped",
        summary.total, summary.executed, summary.skipped
    );
    assert!(summary.failed.is_empty(), "failures {:#?}", summary.failed);
    assert!(
        summary.unhandled.is_empty(),
        "neither executed nor skipped: {:?}",
        summary.unhandled
    );
    assert_eq!(summary.executed + summary.skipped, summary.total);
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
    let summary = run(&text);
    assert_eq!(summary.failed.len(), 1, "{:?}", summary.failed);
    assert_eq!(summary.unhandled.len(), 1);
    assert_eq!(summary.executed + 1, summary.total);
}
