//! Runs vectors/transport-envelope-v1.json through the core's operations by name
//! (`registry::call_json`, what the C export calls): each case's envelopes in order through
//! `envelope.verifySequence` (one fresh nonce set per case), the known-answer signatures through
//! `envelope.sign`, the signing inputs through `envelope.signingInput`. Reports executed and
//! skipped cases (`AIC_VECTOR` filters by id). The file is written by `cargo xtask gen`
//! (xtask/src/envelope.rs); this runner also checks it against the library directly.

#[path = "support/contract_call.rs"]
mod contract_call;
#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::contract::Js;
use agent_intercom_core::envelope;
use vector_filter::{Counts, Filter};

const FILE: &str = "transport-envelope-v1.json";

fn document() -> Js {
    let path = format!("{}/../vectors/{FILE}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Js::parse_json(&text).expect("the vectors are JSON")
}

fn items(v: Option<&Js>) -> Vec<&Js> {
    match v {
        Some(Js::Array(a)) => a.items.iter().flatten().collect(),
        _ => Vec::new(),
    }
}

fn padded(text: &str, size: Option<f64>) -> String {
    match size {
        Some(n) => format!("{text}{}", " ".repeat(n as usize - text.len())),
        None => text.to_string(),
    }
}

fn run_case(doc: &Js, case: &Js) -> Result<(), String> {
    let envelopes: Vec<Js> = items(case.get("envelopes"))
        .iter()
        .map(|e| {
            Js::str(padded(
                e.as_str().unwrap(),
                case.get("pad_to_bytes").and_then(Js::as_num),
            ))
        })
        .collect();
    let expected: Vec<&str> = items(case.get("expected"))
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    let now = case.get("now_ms").or(doc.get("now_ms")).unwrap();
    let list = Js::array(envelopes.clone());
    let outcomes = contract_call::call(
        "envelope.verifySequence",
        &[
            &list,
            doc.get("keyring").unwrap(),
            now,
            doc.get("skew_ms").unwrap(),
        ],
    )
    .map_err(|r| format!("refused: {}", r.message))?;
    let got: Vec<String> = items(Some(&outcomes))
        .iter()
        .map(|o| match o.get("ok") {
            Some(Js::Bool(true)) => "OK".to_string(),
            _ => o
                .get("code")
                .and_then(Js::as_str)
                .unwrap_or("?")
                .to_string(),
        })
        .collect();
    if got != expected {
        return Err(format!("expected {expected:?}, got {got:?}"));
    }
    // The same, through the library without the operation table.
    let keyring = envelope::ops::keyring_of(doc.get("keyring").unwrap()).unwrap();
    let mut seen = envelope::NonceSet::new();
    for (text, want) in envelopes.iter().zip(&expected) {
        let now = now.as_num().unwrap() as i64;
        let skew = doc.get("skew_ms").unwrap().as_num().unwrap() as i64;
        let outcome = envelope::verify(text.as_str().unwrap().as_bytes(), &keyring, now, skew)
            .and_then(|v| seen.remember(&v));
        let code = outcome.map_or_else(|e| e.code().as_str().to_string(), |()| "OK".into());
        if code != *want {
            return Err(format!("library: expected {want}, got {code}"));
        }
    }
    if let Some(sign) = case.get("sign") {
        let signer = doc
            .get("signers")
            .and_then(|s| s.get(sign.get("signer").unwrap().as_str().unwrap()))
            .unwrap();
        let signed = contract_call::call("envelope.sign", &[sign.get("fields").unwrap(), signer])
            .map_err(|r| format!("sign refused: {}", r.message))?;
        if signed.as_str() != envelopes[0].as_str() {
            return Err("envelope.sign does not reproduce the envelope".into());
        }
    }
    if let Some(hash) = case.get("signing_input_sha256") {
        let input = contract_call::call("envelope.signingInput", &[&envelopes[0]])
            .map_err(|r| format!("signingInput refused: {}", r.message))?;
        if input.get("sha256") != Some(hash) {
            return Err("the signing input's SHA-256 differs".into());
        }
    }
    Ok(())
}

#[test]
fn transport_envelope_vectors() {
    let doc = document();
    let cases = items(doc.get("cases"));
    assert_eq!(
        doc.get("count").and_then(Js::as_num),
        Some(cases.len() as f64)
    );
    assert_eq!(doc.get("schema_version").and_then(Js::as_num), Some(1.0));
    let filter = Filter::from_env();
    let mut counts = Counts::new(cases.len());
    let mut failed = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for case in cases {
        let id = case.get("id").and_then(Js::as_str).unwrap();
        assert!(ids.insert(id), "case id {id} twice");
        if !filter.selects(id) {
            counts.filtered += 1;
            continue;
        }
        counts.executed += 1;
        if let Err(why) = run_case(&doc, case) {
            failed.push(format!("{id}: {why}"));
        }
    }
    counts.report(FILE, &filter);
    assert!(failed.is_empty(), "failed:\n{}", failed.join("\n"));
}
