//! The broker and restricted-client part of `./boss` (boss-service.ts): every case of
//! `tests/data/boss_service_cases.json` (real Ed25519 signatures; each case with the outcome the
//! TypeScript core 0.2.0 gives it) through `registry::call_json`, what the C export calls, plus
//! what JSON cannot carry (the Node module's `KeyObject` table, accessors, proxies). Counts
//! executed and skipped cases; `AIC_VECTOR=<id part>` selects.

#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::contract::Js;
use agent_intercom_core::registry::{call_json, call_snapshot, operations};
use vector_filter::{Counts, Filter};

fn cases_file() -> Js {
    let path = format!(
        "{}/tests/data/boss_service_cases.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Js::parse_json(&text).expect("the cases are JSON")
}

fn items(value: Option<&Js>) -> Vec<&Js> {
    match value {
        Some(Js::Array(a)) => a.items.iter().flatten().collect(),
        _ => panic!("not an array"),
    }
}

fn text<'a>(value: &'a Js, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Js::as_str)
}

/// The value with every `{"$ref": name}` replaced by (a resolved copy of) `bases[name]`.
fn resolve(value: &Js, bases: &Js) -> Js {
    match value {
        Js::Object(o) if o.members.len() == 1 && o.members[0].0.text == "$ref" => {
            let name = o.members[0].1.as_str().expect("a base name");
            resolve(bases.get(name).expect("a known base"), bases)
        }
        Js::Object(o) => {
            let mut copy = o.clone();
            for (_, item) in &mut copy.members {
                *item = resolve(item, bases);
            }
            Js::Object(copy)
        }
        Js::Array(a) => {
            let mut copy = a.clone();
            for item in copy.items.iter_mut().flatten() {
                *item = resolve(item, bases);
            }
            Js::Array(copy)
        }
        other => other.clone(),
    }
}

/// One case: `Ok` when the core gives the TypeScript core's outcome.
fn run(case: &Js, bases: &Js) -> Result<(), String> {
    let op = text(case, "op").ok_or("no op")?;
    let args = resolve(case.get("args").ok_or("no args")?, bases);
    let expect = resolve(case.get("expect").ok_or("no expect")?, bases);
    let answer = call_json(op, &args.to_json().ok_or("arguments are JSON")?)
        .map_err(|e| format!("{op}: {e}"))?;
    let answer = Js::parse_json(&answer).map_err(|e| e.to_string())?;
    let ok = answer.get("ok") == Some(&Js::Bool(true));
    let shown = || answer.to_json().unwrap_or_default();
    let same = match (text(&expect, "kind"), ok) {
        (Some("value"), true) => answer.get("value") == expect.get("value"),
        (Some("bytes"), true) => answer.get("value").and_then(Js::as_str) == text(&expect, "text"),
        (Some("undefined"), true) => answer.get("value").is_none(),
        (Some("error"), false) => {
            let error = answer.get("error").ok_or("no error")?;
            ["class", "message", "path", "code"]
                .iter()
                .all(|k| expect.get(k).is_none() || error.get(k) == expect.get(k))
        }
        _ => false,
    };
    if same {
        Ok(())
    } else {
        Err(format!(
            "expected {}, got {}",
            expect.to_json().unwrap_or_default(),
            shown()
        ))
    }
}

#[test]
fn typescript_outcomes() {
    let doc = cases_file();
    let bases = doc.get("bases").expect("bases");
    let list = items(doc.get("cases"));
    assert_eq!(
        doc.get("count").and_then(Js::as_num),
        Some(list.len() as f64)
    );
    let available = operations();
    let filter = Filter::from_env();
    let mut counts = Counts::new(list.len());
    let mut failed = Vec::new();
    for case in list {
        let id = text(case, "id").unwrap_or("?");
        if !filter.selects(id) {
            counts.filtered += 1;
            continue;
        }
        let missing = case
            .get("requires")
            .map(|r| items(Some(r)))
            .unwrap_or_default()
            .into_iter()
            .filter_map(Js::as_str)
            .any(|op| !available.contains(&op));
        if missing {
            counts.skipped += 1;
            continue;
        }
        counts.executed += 1;
        if let Err(why) = run(case, bases) {
            failed.push(format!("{id}: {why}"));
        }
    }
    counts.report("boss_service_cases.json", &filter);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

fn snapshot(op: &str, args: &str) -> String {
    call_snapshot(op, args).unwrap()
}

/// A case's resolved arguments as JSON texts.
fn case_args(id: &str) -> Vec<String> {
    let doc = cases_file();
    let bases = doc.get("bases").unwrap();
    let case = items(doc.get("cases"))
        .into_iter()
        .find(|c| text(c, "id") == Some(id))
        .unwrap_or_else(|| panic!("no case {id}"));
    items(Some(&resolve(case.get("args").unwrap(), bases)))
        .into_iter()
        .map(|a| a.to_json().unwrap())
        .collect()
}

/// The SPKI DER (base64) of a PEM public key.
fn spki(pem: &str) -> String {
    pem.lines().filter(|l| !l.starts_with("-----")).collect()
}

#[test]
fn key_objects_come_from_the_node_table() {
    let [attestation, context] = &case_args("provider/accepted")[..] else {
        panic!("two arguments")
    };
    let doc = Js::parse_json(context).unwrap();
    let pem = doc
        .get("trustedProviderKeys")
        .and_then(|k| k.get("provider-root-1"))
        .and_then(Js::as_str)
        .unwrap()
        .to_string();
    let pem_json = Js::str(pem.clone()).to_json().unwrap();
    let with_key_object = context.replacen(&pem_json, "{@!}", 1);
    let table = |field: &str, kind: &str| {
        format!(
            r#"[{{"field":"{field}","id":"provider-root-1","type":"{kind}","spki":"{}"}}]"#,
            spki(&pem)
        )
    };
    let op = "boss.verifyBrokerProviderAttestation";
    // Without the table, a class instance is no key.
    assert_eq!(
        snapshot(op, &format!("[{attestation},{with_key_object}]")),
        r#"j{"accepted":false,"code":"PROVIDER_KEY_UNKNOWN"}"#
    );
    let public = table("trustedProviderKeys", "public");
    assert_eq!(
        snapshot(op, &format!("[{attestation},{with_key_object},{public}]")),
        r#"j{"accepted":true}"#
    );
    // The entry must name this store, and a private or secret KeyObject is no public key.
    for other in [
        table("trustedIdentityKeys", "public"),
        table("trustedProviderKeys", "private"),
    ] {
        assert_eq!(
            snapshot(op, &format!("[{attestation},{with_key_object},{other}]")),
            r#"j{"accepted":false,"code":"PROVIDER_KEY_UNKNOWN"}"#
        );
    }
}

#[test]
fn snapshot_only_inputs() {
    let [identity, context] = &case_args("identity/accepted")[..] else {
        panic!("two arguments")
    };
    let op = "boss.verifyProtectedBrokerIdentity";
    assert_eq!(
        snapshot(op, &format!("[{identity},{context}]")),
        r#"j{"accepted":true}"#
    );
    // An accessor anywhere in the record or the context refuses without being read.
    let hidden_signature = identity.replacen(r#""signature":"#, r#""signature":h,"x":"#, 1);
    assert!(snapshot(op, &format!("[{hidden_signature},{context}]")).contains("false"));
    let hidden_boot = context.replacen(
        r#""expectedBootInstance":"boot-1""#,
        r#""expectedBootInstance":h"#,
        1,
    );
    assert_eq!(
        snapshot(op, &format!("[{identity},{hidden_boot}]")),
        r#"j{"accepted":false,"code":"IDENTITY_RECORD_INVALID"}"#
    );
    // Proxies are never entered: a proxied identity is not "unsigned".
    assert_eq!(
        snapshot(op, &format!("[p,{context}]")),
        r#"j{"accepted":false,"code":"IDENTITY_RECORD_INVALID"}"#
    );
    // A proxied policy is an unknown principal; a proxied context fails.
    let [request, authorization] = &case_args("authorize/participant_submit_checkpoint")[..] else {
        panic!("two arguments")
    };
    let op = "boss.authorizeBossRestrictedClientRequest";
    let proxied = authorization.replacen(r#""policy":{""#, r#""policy":p,"x":{""#, 1);
    assert!(snapshot(op, &format!("[{request},{proxied}]")).contains("x: is not supported"));
    let start = authorization.find(r#""policy":"#).unwrap();
    let end = 1 + authorization
        .find(r#"},"principalId":"principal-worker-a","currentBinding""#)
        .unwrap();
    let proxied_policy = format!(
        "{}\"policy\":p{}",
        &authorization[..start],
        &authorization[end..]
    );
    assert_eq!(
        snapshot(op, &format!("[{request},{proxied_policy}]")),
        r#"j{"allowed":false,"code":"UNKNOWN_PRINCIPAL"}"#
    );
    assert!(snapshot(op, &format!("[{request},p]")).contains("must be a plain object"));
}
