//! Runs vectors/http-signatures-v1.json through the `httpsig.*` contract operations
//! (`registry::call_json`, what the C export calls), so the Rust, C and Node runners differ only
//! in how they hand a case over; and checks that the file is exactly what its generator
//! (`core/examples/gen_http_signature_vectors.rs`) writes. Prints executed and skipped counts;
//! `AIC_VECTOR=<substring>` selects cases by id.

#[path = "support/contract_call.rs"]
mod contract_call;
#[path = "../examples/gen_http_signature_vectors.rs"]
mod generator;
#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::contract::{Js, JsArray};
use sha2::{Digest as _, Sha256};
use vector_filter::{Counts, Filter};

const FILE: &str = "http-signatures-v1.json";

fn read() -> String {
    let path = format!("{}/../vectors/{FILE}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn call(op: &str, args: &[&Js]) -> Result<Js, String> {
    contract_call::call(op, args).map_err(|r| format!("{op}: {} {}", r.class, r.message))
}

fn member<'a>(v: &'a Js, key: &str) -> &'a Js {
    v.get(key).unwrap_or(&Js::Undefined)
}

fn text<'a>(v: &'a Js, key: &str) -> &'a str {
    member(v, key).as_str().unwrap_or_default()
}

/// Every member of `expected` equals the answer's.
fn matches(what: &str, answer: &Js, expected: &Js) -> Result<(), String> {
    let Js::Object(o) = expected else {
        return Err(format!("{what}: expected is not an object"));
    };
    for (key, want) in &o.members {
        let got = member(answer, &key.text);
        if got != want {
            return Err(format!(
                "{what}: {} is {:?}, expected {:?} (answer {:?})",
                key.text,
                got.to_json(),
                want.to_json(),
                answer.to_json()
            ));
        }
    }
    Ok(())
}

/// `message` with more header lines.
fn with_headers(message: &Js, extra: &[(&str, &str)]) -> Js {
    let mut out = message.clone();
    if let Js::Object(o) = &mut out {
        for (k, v) in o.members.iter_mut() {
            if k.text == "headers"
                && let Js::Array(JsArray { items, .. }) = v
            {
                {
                    for (name, value) in extra {
                        items.push(Some(Js::array(vec![Js::str(*name), Js::str(*value)])));
                    }
                }
            }
        }
    }
    out
}

/// `{keyid: public PEM}` from `{keyid: key name}`.
fn ring(keys: &Js, names: &Js) -> Js {
    let Js::Object(o) = names else {
        return Js::Undefined;
    };
    let entries: Vec<(&str, Js)> = o
        .members
        .iter()
        .map(|(id, name)| {
            let pem = member(member(keys, name.as_str().unwrap_or_default()), "publicKey");
            (id.text.as_str(), pem.clone())
        })
        .collect();
    Js::object(entries)
}

fn private_key<'a>(keys: &'a Js, signer: &Js) -> &'a Js {
    member(member(keys, text(signer, "key")), "privateKey")
}

/// Adds the three signed headers of a sign answer to `message`.
fn signed(message: &Js, answer: &Js) -> Js {
    with_headers(
        message,
        &[
            ("Content-Digest", text(answer, "contentDigest")),
            ("Signature-Input", text(answer, "signatureInput")),
            ("Signature", text(answer, "signature")),
        ],
    )
}

fn run_case(case: &Js, keys: &Js) -> Result<(), String> {
    let get = |k: &str| member(case, k);
    let expected = get("expected");
    match text(case, "kind") {
        "rfc-signature" => {
            let label = get("label");
            let with_input = with_headers(
                get("message"),
                &[("Signature-Input", text(case, "signatureInput"))],
            );
            let base = call("httpsig.signatureBase", &[&with_input, label])?;
            matches(
                "base",
                &base,
                &Js::object(vec![
                    ("ok", Js::Bool(true)),
                    ("base", member(expected, "base").clone()),
                ]),
            )?;
            let base_text = text(&base, "base");
            let length = member(expected, "baseLength").as_num().unwrap_or(-1.0);
            if base_text.len() as f64 != length {
                return Err(format!(
                    "the base is {} bytes, expected {length}",
                    base_text.len()
                ));
            }
            let digest: String = Sha256::digest(base_text.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            if digest != text(expected, "baseSha256") {
                return Err(format!("the base hashes to {digest}"));
            }
            let key = member(keys, text(case, "key"));
            let made = call(
                "httpsig.sign",
                &[
                    get("message"),
                    get("signatureInput"),
                    label,
                    member(key, "privateKey"),
                ],
            )?;
            matches(
                "sign",
                &made,
                &Js::object(vec![
                    ("signatureInput", get("signatureInput").clone()),
                    ("signature", get("signature").clone()),
                ]),
            )?;
            let both = with_headers(&with_input, &[("Signature", text(case, "signature"))]);
            let verified = call("httpsig.verify", &[&both, label, member(key, "publicKey")])?;
            matches(
                "verify",
                &verified,
                &Js::object(vec![("ok", Js::Bool(true))]),
            )
        }
        "content-digest" => {
            let value = call("httpsig.contentDigest", &[get("algorithm"), get("body")])?;
            if value != *expected {
                return Err(format!("{:?}", value.to_json()));
            }
            let checked = call("httpsig.checkContentDigest", &[&value, get("body")])?;
            matches("check", &checked, &Js::object(vec![("ok", Js::Bool(true))]))
        }
        "check-content-digest" => {
            let answer = call("httpsig.checkContentDigest", &[get("field"), get("body")])?;
            matches("check", &answer, expected)
        }
        "signature-base" => {
            let message = with_headers(
                get("message"),
                &[("Signature-Input", text(case, "signatureInput"))],
            );
            let answer = call("httpsig.signatureBase", &[&message, get("label")])?;
            matches("base", &answer, expected)
        }
        "sign-request" => {
            let args = [
                get("profile"),
                get("request"),
                get("body"),
                private_key(keys, get("signer")),
                get("signer"),
            ];
            let answer = call("httpsig.signRequest", &args)?;
            matches("sign", &answer, expected)?;
            let verify = get("verify");
            let request = signed(get("request"), &answer);
            let answer = call(
                "httpsig.verifyRequest",
                &[
                    get("profile"),
                    &request,
                    get("body"),
                    member(verify, "nowMs"),
                    &ring(keys, member(verify, "keyring")),
                ],
            )?;
            matches("verify", &answer, member(verify, "expected"))
        }
        "verify-request" => {
            let answer = call(
                "httpsig.verifyRequest",
                &[
                    get("profile"),
                    get("request"),
                    get("body"),
                    get("nowMs"),
                    &ring(keys, get("keyring")),
                ],
            )?;
            matches("verify", &answer, expected)
        }
        "sign-response" => {
            let args = [
                get("profile"),
                get("response"),
                get("request"),
                get("body"),
                private_key(keys, get("signer")),
                get("signer"),
            ];
            let answer = call("httpsig.signResponse", &args)?;
            matches("sign", &answer, expected)?;
            let verify = get("verify");
            let response = signed(get("response"), &answer);
            let answer = call(
                "httpsig.verifyResponse",
                &[
                    get("profile"),
                    &response,
                    get("request"),
                    get("body"),
                    member(verify, "nowMs"),
                    &ring(keys, member(verify, "keyring")),
                ],
            )?;
            matches("verify", &answer, member(verify, "expected"))
        }
        "verify-response" => {
            let answer = call(
                "httpsig.verifyResponse",
                &[
                    get("profile"),
                    get("response"),
                    get("request"),
                    get("body"),
                    get("nowMs"),
                    &ring(keys, get("keyring")),
                ],
            )?;
            matches("verify", &answer, expected)
        }
        other => Err(format!("unknown kind {other:?}")),
    }
}

fn run(filter: &Filter) -> Counts {
    let doc = Js::parse_json(&read()).expect("the vectors are JSON");
    assert_eq!(
        text(&doc, "corpus"),
        "agent-intercom-core/http-signatures-v1"
    );
    assert_eq!(member(&doc, "schemaVersion").as_num(), Some(1.0));
    let Some(Js::Array(list)) = doc.get("cases") else {
        panic!("no cases")
    };
    let cases: Vec<&Js> = list.items.iter().flatten().collect();
    assert_eq!(
        member(&doc, "count").as_num(),
        Some(cases.len() as f64),
        "count field"
    );
    let keys = member(&doc, "keys");
    let mut counts = Counts::new(cases.len());
    let mut failed = Vec::new();
    for case in cases {
        let id = text(case, "id");
        if !filter.selects(id) {
            counts.filtered += 1;
            continue;
        }
        counts.executed += 1;
        if let Err(why) = run_case(case, keys) {
            failed.push(format!("{id}: {why}"));
        }
    }
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    counts
}

#[test]
fn every_vector_passes() {
    let filter = Filter::from_env();
    run(&filter).report(FILE, &filter);
}

#[test]
fn every_case_runs_without_a_filter() {
    let counts = run(&Filter::none());
    assert_eq!((counts.executed, counts.skipped), (counts.total, 0));
    assert!(counts.total >= 120, "{}", counts.total);
}

#[test]
fn the_file_is_what_its_generator_writes() {
    assert!(
        read() == generator::generate(),
        "vectors/{FILE} is stale: {}",
        "cargo run -p agent-intercom-core --locked --example gen_http_signature_vectors \
         > vectors/http-signatures-v1.json"
    );
}
