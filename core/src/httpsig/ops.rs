//! The signature functions as contract operations, for the C and Node runners of
//! `vectors/http-signatures-v1.json` (`aic_contract_call`, `lib/contract.js` `call`).
//!
//! Arguments are plain JSON. A request is `{"method", "targetUri", "headers"}`, a response
//! `{"status", "headers"}` (and, for [`OPS`]' `httpsig.signatureBase`, `"request"`), headers a
//! list of `[name, value]` pairs in order (repeats allowed), a value or a body a string (its
//! UTF-8 bytes) or `{"base64": "..."}` (any bytes). A profile is named: `a2a-request`,
//! `a2a-response`, `line-request` or `line-response`. Keys are PEM text; a keyring is
//! `{keyid: public PEM}`.
//!
//! Every operation answers `{"ok": true, ...}` or, when the library refuses,
//! `{"ok": false, "code": "<ERROR_CODE>", "message"}`; only arguments of the wrong shape are a
//! failure (`Error` with code `INVALID_ARGUMENT`).

use base64::Engine as _;

use super::{
    DigestAlgorithm, EXTENSION_URI, Headers, Message, Profile, PublicKey, Request, Response,
    SignInput, SigningKey,
};
use crate::contract::value::write_json_string;
use crate::contract::{Failure, Js, Op, Out};
use crate::error::Error;

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "httpsig.profile",
        run: |a| profile(a.get(0)).map(|p| Out::Json(profile_json(&p))),
    },
    Op {
        name: "httpsig.signRequest",
        run: |a| {
            let (profile, request, body) =
                (profile(a.get(0))?, request(a.get(1))?, bytes(a.get(2))?);
            let key = signing_key(a.get(3));
            answer(
                key.and_then(|key| {
                    with_input(a.get(4), &key, |input| {
                        super::sign_request(&profile, &request, &body, input)
                    })
                })
                .map(|s| signed_json(&s)),
            )
        },
    },
    Op {
        name: "httpsig.signResponse",
        run: |a| {
            let (profile, response, request) =
                (profile(a.get(0))?, response(a.get(1))?, request(a.get(2))?);
            let body = bytes(a.get(3))?;
            let key = signing_key(a.get(4));
            answer(
                key.and_then(|key| {
                    with_input(a.get(5), &key, |input| {
                        super::sign_response(&profile, &response, &request, &body, input)
                    })
                })
                .map(|s| signed_json(&s)),
            )
        },
    },
    Op {
        name: "httpsig.verifyRequest",
        run: |a| {
            let (profile, request, body) =
                (profile(a.get(0))?, request(a.get(1))?, bytes(a.get(2))?);
            let (now, keyring) = (integer(a.get(3), "nowMs")?, keyring(a.get(4))?);
            let lookup = |id: &str| find_key(&keyring, id);
            answer(
                super::verify_request(&profile, &request, &body, now, lookup)
                    .map(|v| verified_json(&v)),
            )
        },
    },
    Op {
        name: "httpsig.verifyResponse",
        run: |a| {
            let (profile, response, request) =
                (profile(a.get(0))?, response(a.get(1))?, request(a.get(2))?);
            let (body, now, keyring) = (
                bytes(a.get(3))?,
                integer(a.get(4), "nowMs")?,
                keyring(a.get(5))?,
            );
            let lookup = |id: &str| find_key(&keyring, id);
            answer(
                super::verify_response(&profile, &response, &request, &body, now, lookup)
                    .map(|v| verified_json(&v)),
            )
        },
    },
    Op {
        name: "httpsig.signatureBase",
        run: |a| {
            let label = text(a.get(1), "label")?;
            with_message(a.get(0), |message| {
                let inputs = super::parse_signature_input(message.headers())?;
                let (_, params) = inputs
                    .into_iter()
                    .find(|(l, _)| l == label)
                    .ok_or_else(|| super::malformed(format!("no Signature-Input {label}")))?;
                let base = super::signature_base(message, &params)?;
                Ok(object(&[
                    ("base", string(&base)),
                    ("signatureInput", string(&params.to_field(label)?)),
                ]))
            })
        },
    },
    Op {
        name: "httpsig.sign",
        run: |a| {
            let (input, label) = (text(a.get(1), "signatureInput")?, text(a.get(2), "label")?);
            let pem = text(a.get(3), "privateKey")?.to_string();
            with_message(a.get(0), |message| {
                let mut holder = Headers::new();
                holder.push("signature-input", input);
                let (_, params) = super::parse_signature_input(&holder)?
                    .into_iter()
                    .find(|(l, _)| l == label)
                    .ok_or_else(|| super::malformed(format!("no Signature-Input {label}")))?;
                let key = SigningKey::from_pem(&pem)?;
                let (input, signature, base) = super::sign(message, label, &params, &key)?;
                Ok(object(&[
                    ("signatureInput", string(&input)),
                    ("signature", string(&signature)),
                    ("base", string(&base)),
                ]))
            })
        },
    },
    Op {
        name: "httpsig.verify",
        run: |a| {
            let (label, pem) = (text(a.get(1), "label")?, text(a.get(2), "publicKey")?);
            with_message(a.get(0), |message| {
                let key = PublicKey::from_pem(pem)?;
                let (params, base) = super::verify(message, label, &key)?;
                Ok(object(&[
                    ("keyid", params.keyid().map_or("null".into(), string)),
                    ("base", string(&base)),
                ]))
            })
        },
    },
    Op {
        name: "httpsig.contentDigest",
        run: |a| {
            let algorithm = digest_algorithm(a.get(0))?;
            let value = super::content_digest(algorithm, &bytes(a.get(1))?);
            Ok(Out::Json(string(&value)))
        },
    },
    Op {
        name: "httpsig.checkContentDigest",
        run: |a| {
            let mut headers = Headers::new();
            if !matches!(a.get(0), Js::Null) {
                headers.push("content-digest", bytes(a.get(0))?);
            }
            let body = bytes(a.get(1))?;
            answer(
                super::check_content_digest(&headers, &body, &DigestAlgorithm::all()).map(|algs| {
                    let names: Vec<String> = algs.iter().map(|a| string(a.name())).collect();
                    object(&[("algorithms", format!("[{}]", names.join(",")))])
                }),
            )
        },
    },
];

fn shape(message: impl Into<String>) -> Failure {
    Failure {
        class: "Error",
        path: None,
        detail: message.into(),
        code: Some("INVALID_ARGUMENT".to_string()),
    }
}

/// The library's answer as `{"ok":true,...}` (from the members' JSON `{...}`) or its refusal.
fn answer(result: Result<String, Error>) -> Result<Out, Failure> {
    Ok(Out::Json(match result {
        Ok(members) if members == "{}" => "{\"ok\":true}".to_string(),
        Ok(members) => format!("{{\"ok\":true,{}", &members[1..]),
        Err(e) => object(&[
            ("ok", "false".into()),
            ("code", string(e.code().as_str())),
            ("message", string(e.message())),
        ]),
    }))
}

fn string(text: &str) -> String {
    let mut out = String::new();
    write_json_string(&mut out, text);
    out
}

/// A JSON object of already-encoded member values.
fn object(members: &[(&str, String)]) -> String {
    let parts: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{}:{v}", string(k)))
        .collect();
    format!("{{{}}}", parts.join(","))
}

fn text<'a>(value: &'a Js, what: &str) -> Result<&'a str, Failure> {
    value
        .as_str()
        .ok_or_else(|| shape(format!("{what} must be a string")))
}

fn integer(value: &Js, what: &str) -> Result<i64, Failure> {
    value
        .safe_integer()
        .ok_or_else(|| shape(format!("{what} must be a safe integer")))
}

/// A string's UTF-8 bytes, or `{"base64": "..."}`'s bytes.
fn bytes(value: &Js) -> Result<Vec<u8>, Failure> {
    if let Some(text) = value.as_str() {
        return Ok(text.as_bytes().to_vec());
    }
    let encoded = value
        .get("base64")
        .and_then(Js::as_str)
        .ok_or_else(|| shape("a value must be a string or {\"base64\": string}"))?;
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|_| shape("a base64 value is not base64"))
}

fn profile(value: &Js) -> Result<Profile, Failure> {
    match value.as_str() {
        Some("a2a-request") => Ok(Profile::a2a_request()),
        Some("a2a-response") => Ok(Profile::a2a_response()),
        Some("line-request") => Ok(Profile::line_request()),
        Some("line-response") => Ok(Profile::line_response()),
        _ => Err(shape(
            "the profile must be \"a2a-request\", \"a2a-response\", \"line-request\" or \
             \"line-response\"",
        )),
    }
}

fn headers(value: Option<&Js>) -> Result<Headers, Failure> {
    let mut out = Headers::new();
    let Some(Js::Array(list)) = value else {
        return Err(shape("headers must be a list of [name, value]"));
    };
    for item in list.items.iter().flatten() {
        let Js::Array(pair) = item else {
            return Err(shape("a header must be [name, value]"));
        };
        match pair.items.as_slice() {
            [Some(name), Some(value)] => out.push(text(name, "a header name")?, bytes(value)?),
            _ => return Err(shape("a header must be [name, value]")),
        }
    }
    Ok(out)
}

fn request(value: &Js) -> Result<Request, Failure> {
    let method = text(value.get("method").unwrap_or(&Js::Undefined), "method")?;
    let uri = text(
        value.get("targetUri").unwrap_or(&Js::Undefined),
        "targetUri",
    )?;
    let mut request = Request::new(method, uri).map_err(|e| shape(e.message()))?;
    request.headers = headers(value.get("headers"))?;
    Ok(request)
}

fn response(value: &Js) -> Result<Response, Failure> {
    let status = integer(value.get("status").unwrap_or(&Js::Undefined), "status")?;
    let status = u16::try_from(status).map_err(|_| shape("status is out of range"))?;
    let mut response = Response::new(status).map_err(|e| shape(e.message()))?;
    response.headers = headers(value.get("headers"))?;
    Ok(response)
}

/// Runs `run` over a request (`method` present) or a response (with its `request`, if any).
fn with_message(
    value: &Js,
    run: impl FnOnce(Message<'_>) -> Result<String, Error>,
) -> Result<Out, Failure> {
    if value.get("method").is_some() {
        let request = request(value)?;
        return answer(run(Message::Request(&request)));
    }
    let response = response(value)?;
    let answered = match value.get("request") {
        Some(r) => Some(request(r)?),
        None => None,
    };
    answer(run(Message::Response {
        response: &response,
        request: answered.as_ref(),
    }))
}

fn signing_key(value: &Js) -> Result<SigningKey, Error> {
    match value.as_str() {
        Some(pem) => SigningKey::from_pem(pem),
        None => Err(super::invalid("the private key must be PEM text")),
    }
}

fn with_input<T>(
    value: &Js,
    key: &SigningKey,
    run: impl FnOnce(&SignInput<'_>) -> Result<T, Error>,
) -> Result<T, Error> {
    let field = |k: &str| value.get(k).unwrap_or(&Js::Undefined);
    let number = |k: &str| {
        field(k)
            .safe_integer()
            .ok_or_else(|| super::invalid(format!("{k} must be a safe integer")))
    };
    let word = |k: &str| {
        field(k)
            .as_str()
            .ok_or_else(|| super::invalid(format!("{k} must be a string")))
    };
    run(&SignInput {
        key,
        keyid: word("keyid")?,
        created: number("created")?,
        expires: number("expires")?,
        nonce: word("nonce")?,
    })
}

fn keyring(value: &Js) -> Result<Vec<(String, Option<PublicKey>)>, Failure> {
    let Js::Object(o) = value else {
        return Err(shape("the keyring must be an object {keyid: PEM}"));
    };
    o.members
        .iter()
        .map(|(id, pem)| {
            let pem = text(pem, "a keyring entry")?;
            Ok((id.text.clone(), PublicKey::from_pem(pem).ok()))
        })
        .collect()
}

fn find_key(keyring: &[(String, Option<PublicKey>)], id: &str) -> Option<PublicKey> {
    keyring
        .iter()
        .find(|(k, _)| k == id)
        .and_then(|(_, key)| *key)
}

fn digest_algorithm(value: &Js) -> Result<DigestAlgorithm, Failure> {
    value
        .as_str()
        .and_then(DigestAlgorithm::from_name)
        .ok_or_else(|| shape("the algorithm must be sha-256 or sha-512"))
}

fn signed_json(s: &super::SignedHeaders) -> String {
    object(&[
        ("contentDigest", string(&s.content_digest)),
        ("signatureInput", string(&s.signature_input)),
        ("signature", string(&s.signature)),
        ("base", string(&s.base)),
    ])
}

fn verified_json(v: &super::Verified) -> String {
    object(&[
        ("label", string(&v.label)),
        ("keyid", string(&v.keyid)),
        ("nonce", v.nonce.as_deref().map_or("null".into(), string)),
        ("created", v.created.to_string()),
        (
            "expires",
            v.expires.map_or("null".into(), |e| e.to_string()),
        ),
        ("replayUntilMs", v.replay_until_ms.to_string()),
        ("base", string(&v.base)),
    ])
}

fn profile_json(p: &Profile) -> String {
    let list = |items: Vec<String>| format!("[{}]", items.join(","));
    let components =
        |cs: &[super::Component]| list(cs.iter().map(|c| string(&c.serialize())).collect());
    object(&[
        ("label", string(&p.label)),
        ("components", components(&p.components)),
        ("componentsIfPresent", components(&p.components_if_present)),
        (
            "requiredParams",
            list(p.required_params.iter().map(|n| string(n)).collect()),
        ),
        ("alg", string(super::ALGORITHM)),
        ("tag", string(&p.tag)),
        ("signDigest", string(p.sign_digest.name())),
        (
            "acceptedDigests",
            list(
                p.accepted_digests
                    .iter()
                    .map(|a| string(a.name()))
                    .collect(),
            ),
        ),
        ("maxSkewSecs", p.max_skew_secs.to_string()),
        ("maxAgeSecs", p.max_age_secs.to_string()),
        ("maxLifetimeSecs", p.max_lifetime_secs.to_string()),
        ("nonceMinLength", p.nonce_len.start().to_string()),
        ("nonceMaxLength", p.nonce_len.end().to_string()),
        ("extensionUri", string(EXTENSION_URI)),
    ])
}

#[cfg(test)]
mod tests {
    use crate::registry::call_json;

    #[test]
    fn operations_answer_ok_or_a_code() {
        let r = call_json("httpsig.profile", r#"["a2a-request"]"#).unwrap();
        assert!(r.contains(r#""tag":"agent-intercom-a2a@1""#), "{r}");
        assert!(
            r.contains(r#""components":["\"@method\"","\"@target-uri\""#),
            "{r}"
        );
        let r = call_json("httpsig.profile", r#"["other"]"#).unwrap();
        assert!(r.contains(r#""code":"INVALID_ARGUMENT""#), "{r}");
        let r = call_json("httpsig.contentDigest", r#"["sha-256",""]"#).unwrap();
        assert_eq!(
            r,
            r#"{"ok":true,"value":"sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:"}"#
        );
        let r = call_json("httpsig.checkContentDigest", r#"[null,""]"#).unwrap();
        assert!(r.contains(r#""code":"CONTENT_DIGEST_MISMATCH""#), "{r}");
        let r = call_json("httpsig.checkContentDigest", r#"[{"base64":"!"},""]"#).unwrap();
        assert!(r.contains(r#""ok":false,"error""#), "{r}");
        let request = r#"{"method":"POST","targetUri":"https://h/a2a","headers":[]}"#;
        let r = call_json(
            "httpsig.verifyRequest",
            &format!(r#"["a2a-request",{request},"",0,{{}}]"#),
        )
        .unwrap();
        assert!(r.contains(r#""code":"SIGNATURE_MISSING""#), "{r}");
        let r = call_json(
            "httpsig.signRequest",
            &format!(r#"["a2a-request",{request},"","x",{{}}]"#),
        )
        .unwrap();
        assert!(
            r.contains(r#""value":{"ok":false,"code":"INVALID_ARGUMENT""#),
            "{r}"
        );
    }
}
