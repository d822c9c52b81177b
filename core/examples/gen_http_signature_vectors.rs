//! Writes `vectors/http-signatures-v1.json`:
//!
//! ```text
//! cargo run -p agent-intercom-core --locked --example gen_http_signature_vectors \
//!     > vectors/http-signatures-v1.json
//! ```
//!
//! Every case is built with `agent_intercom_core::httpsig` from fixed inputs (test keys whose
//! seeds are SHA-256 of their names, fixed times and nonces), so the output is the same on
//! every run; `core/tests/http_signatures.rs` checks that the file is exactly this output. The
//! RFC cases carry the RFC's own values (RFC 9421 B.2.6, RFC 9530), not ours.

#![allow(dead_code)] // included by the Rust runner, which does not call `main`

use agent_intercom_core::httpsig::{
    self, Component, DigestAlgorithm, Headers, Message, Param, Profile, Request, Response,
    SignInput, SignatureParams, SigningKey,
};
use base64::Engine as _;
use sha2::{Digest as _, Sha256};

fn main() {
    print!("{}", generate());
}

/// A JSON value, written as `JSON.stringify(value, null, 2)` writes it.
#[derive(Clone)]
enum J {
    S(String),
    N(i64),
    B(bool),
    Null,
    A(Vec<J>),
    O(Vec<(&'static str, J)>),
}

fn s(text: &str) -> J {
    J::S(text.to_string())
}

fn write(out: &mut String, value: &J, indent: usize) {
    let pad = |n: usize| "  ".repeat(n);
    match value {
        J::S(text) => {
            out.push('"');
            for c in text.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    '\r' => out.push_str("\\r"),
                    c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        J::N(n) => out.push_str(&n.to_string()),
        J::B(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Null => out.push_str("null"),
        J::A(items) if items.is_empty() => out.push_str("[]"),
        J::O(members) if members.is_empty() => out.push_str("{}"),
        J::A(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&pad(indent + 1));
                write(out, item, indent + 1);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(indent));
            out.push(']');
        }
        J::O(members) => {
            out.push_str("{\n");
            for (i, (key, item)) in members.iter().enumerate() {
                out.push_str(&pad(indent + 1));
                write(out, &s(key), 0);
                out.push_str(": ");
                write(out, item, indent + 1);
                out.push_str(if i + 1 < members.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(indent));
            out.push('}');
        }
    }
}

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// 2026-01-01T00:00:00Z.
const NOW: i64 = 1_767_225_600;
const NOW_MS: i64 = NOW * 1000;
const NONCE: &str = "n2yXYb0qQ1mWkT4sVfE7aA";
const BODY: &str = concat!(
    r#"{"jsonrpc":"2.0","id":"r-1","method":"SendMessage","params":{"message":"#,
    r#"{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}"#
);
const REPLY: &str = concat!(
    r#"{"jsonrpc":"2.0","id":"r-1","result":{"task":{"id":"t-1","#,
    r#""status":{"state":"TASK_STATE_SUBMITTED"}}}}"#
);

const RFC_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----\n\
MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n-----END PUBLIC KEY-----\n";
const RFC_PRIVATE: &str = "-----BEGIN PRIVATE KEY-----\n\
MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n-----END PRIVATE KEY-----\n";

/// The test keys: the RFC's, and ours (seed = SHA-256 of the name). Test keys only.
const KEY_NAMES: [&str; 4] = ["client-2026-a", "client-2026-b", "service-2026", "stranger"];

fn key(name: &str) -> SigningKey {
    if name == "test-key-ed25519" {
        return SigningKey::from_pem(RFC_PRIVATE).expect("the RFC key");
    }
    let seed = Sha256::digest(format!("agent-intercom http-signatures-v1 test key {name}"));
    SigningKey::from_seed(&seed).expect("32 bytes")
}

fn pem(label: &str, der: &[u8]) -> String {
    let body = B64.encode(der);
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).expect("base64 is ASCII"))
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
}

fn key_entry(name: &str) -> J {
    if name == "test-key-ed25519" {
        return J::O(vec![
            ("publicKey", s(RFC_PUBLIC)),
            ("privateKey", s(RFC_PRIVATE)),
        ]);
    }
    let k = key(name);
    let mut spki = hex_bytes("302a300506032b6570032100");
    spki.extend_from_slice(&k.public_key().to_bytes());
    let seed = Sha256::digest(format!("agent-intercom http-signatures-v1 test key {name}"));
    let mut pkcs8 = hex_bytes("302e020100300506032b657004220420");
    pkcs8.extend_from_slice(&seed);
    J::O(vec![
        ("publicKey", s(&pem("PUBLIC KEY", &spki))),
        ("privateKey", s(&pem("PRIVATE KEY", &pkcs8))),
    ])
}

fn hex_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A header value: text when it is UTF-8, else `{"base64": ...}`.
fn value(bytes: &[u8]) -> J {
    match std::str::from_utf8(bytes) {
        Ok(text) => s(text),
        Err(_) => J::O(vec![("base64", s(&B64.encode(bytes)))]),
    }
}

fn headers(h: &Headers) -> J {
    J::A(h.iter().map(|(n, v)| J::A(vec![s(n), value(v)])).collect())
}

fn request_json(r: &Request, uri: &str) -> J {
    J::O(vec![
        ("method", s(r.method())),
        ("targetUri", s(uri)),
        ("headers", headers(&r.headers)),
    ])
}

fn response_json(r: &Response) -> J {
    J::O(vec![
        ("status", J::N(i64::from(r.status()))),
        ("headers", headers(&r.headers)),
    ])
}

/// The request and the URI it was made with (the JSON keeps the URI as given).
#[derive(Clone)]
struct Req {
    uri: String,
    r: Request,
}

impl Req {
    fn new(method: &str, uri: &str) -> Req {
        Req {
            uri: uri.to_string(),
            r: Request::new(method, uri).expect("a valid target"),
        }
    }

    fn header(mut self, name: &str, value: impl Into<Vec<u8>>) -> Req {
        self.r.headers.push(name, value);
        self
    }

    fn json(&self) -> J {
        request_json(&self.r, &self.uri)
    }

    /// With header `name` replaced by `value` (appended at the end).
    fn set(&self, name: &str, value: impl Into<Vec<u8>>) -> Req {
        let mut out = self.clone();
        out.r.headers.remove(name);
        out.r.headers.push(name, value);
        out
    }

    fn without(&self, name: &str) -> Req {
        let mut out = self.clone();
        out.r.headers.remove(name);
        out
    }

    fn get(&self, name: &str) -> String {
        let v = self.r.headers.values(name).next().expect("the header");
        String::from_utf8(v.to_vec()).expect("UTF-8")
    }
}

fn a2a_request(uri: &str) -> Req {
    Req::new("POST", uri)
        .header("Content-Type", "application/json")
        .header("A2A-Version", "1.0")
}

const AGENT: &str = "https://agent.example/a2a";

struct Signer {
    key: &'static str,
    keyid: &'static str,
    created: i64,
    expires: i64,
    nonce: &'static str,
}

const CLIENT: Signer = Signer {
    key: "client-2026-b",
    keyid: "client-2026-b",
    created: NOW,
    expires: NOW + 60,
    nonce: NONCE,
};

const SERVICE: Signer = Signer {
    key: "service-2026",
    keyid: "service-2026",
    created: NOW + 1,
    expires: NOW + 61,
    nonce: "c2VydmljZS1ub25jZS0wMQ",
};

fn signer_json(s_: &Signer) -> J {
    J::O(vec![
        ("key", s(s_.key)),
        ("keyid", s(s_.keyid)),
        ("created", J::N(s_.created)),
        ("expires", J::N(s_.expires)),
        ("nonce", s(s_.nonce)),
    ])
}

fn sign_input<'a>(k: &'a SigningKey, s_: &'a Signer) -> SignInput<'a> {
    SignInput {
        key: k,
        keyid: s_.keyid,
        created: s_.created,
        expires: s_.expires,
        nonce: s_.nonce,
    }
}

fn keyring(entries: &[(&str, &str)]) -> J {
    J::O(
        entries
            .iter()
            .map(|(id, name)| (leak(id), s(name)))
            .collect(),
    )
}

fn leak(text: &str) -> &'static str {
    Box::leak(text.to_string().into_boxed_str())
}

fn client_ring() -> J {
    keyring(&[("client-2026-b", "client-2026-b")])
}

/// Signs `req` under the request profile; the signed request.
fn sign(req: &Req, body: &str, signer: &Signer) -> (Req, httpsig::SignedHeaders) {
    let k = key(signer.key);
    let signed = httpsig::sign_request(
        &Profile::a2a_request(),
        &req.r,
        body.as_bytes(),
        &sign_input(&k, signer),
    )
    .expect("signable");
    let mut out = req.clone();
    signed.apply(&mut out.r.headers);
    (out, signed)
}

fn verified(v: &httpsig::Verified) -> J {
    J::O(vec![
        ("ok", J::B(true)),
        ("keyid", s(&v.keyid)),
        ("nonce", v.nonce.as_deref().map_or(J::Null, s)),
        ("created", J::N(v.created)),
        ("expires", v.expires.map_or(J::Null, J::N)),
        ("replayUntilMs", J::N(v.replay_until_ms)),
    ])
}

fn refused(code: &str) -> J {
    J::O(vec![("ok", J::B(false)), ("code", s(code))])
}

struct Cases(Vec<J>);

impl Cases {
    fn push(&mut self, id: &str, kind: &str, mut members: Vec<(&'static str, J)>) {
        let mut case = vec![("id", s(id)), ("kind", s(kind))];
        case.append(&mut members);
        self.0.push(J::O(case));
    }

    /// A request signed here, with the signing expectations, then verified.
    fn sign_request(&mut self, id: &str, req: &Req, signer: &Signer, now_ms: i64, ring: J) {
        let (signed, headers) = sign(req, BODY, signer);
        let lookup = ring_lookup(&ring);
        let v = httpsig::verify_request(
            &Profile::a2a_request(),
            &signed.r,
            BODY.as_bytes(),
            now_ms,
            &lookup,
        );
        let expected = match v {
            Ok(v) => verified(&v),
            Err(e) => refused(e.code().as_str()),
        };
        self.push(
            id,
            "sign-request",
            vec![
                ("profile", s("a2a-request")),
                ("request", req.json()),
                ("body", s(BODY)),
                ("signer", signer_json(signer)),
                ("expected", signed_json(&headers)),
                (
                    "verify",
                    J::O(vec![
                        ("nowMs", J::N(now_ms)),
                        ("keyring", ring),
                        ("expected", expected),
                    ]),
                ),
            ],
        );
    }

    /// A request as received, verified; `want` is the code the case pins (checked here too).
    fn verify_request(
        &mut self,
        id: &str,
        req: &Req,
        body: &str,
        now_ms: i64,
        ring: J,
        want: &str,
    ) {
        let lookup = ring_lookup(&ring);
        let got = httpsig::verify_request(
            &Profile::a2a_request(),
            &req.r,
            body.as_bytes(),
            now_ms,
            &lookup,
        );
        let expected = match got {
            Ok(v) if want == "OK" => verified(&v),
            Err(e) if e.code().as_str() == want => refused(want),
            Ok(_) => panic!("{id}: verified, expected {want}"),
            Err(e) => panic!("{id}: {e}, expected {want}"),
        };
        self.push(
            id,
            "verify-request",
            vec![
                ("profile", s("a2a-request")),
                ("request", req.json()),
                ("body", s(body)),
                ("nowMs", J::N(now_ms)),
                ("keyring", ring),
                ("expected", expected),
            ],
        );
    }
}

impl Cases {
    /// A request as received, verified under the named profile; `want` is checked here too.
    #[allow(clippy::too_many_arguments)]
    fn verify_request_under(
        &mut self,
        profile: &str,
        id: &str,
        req: &Req,
        body: &str,
        now_ms: i64,
        ring: J,
        want: &str,
    ) {
        let lookup = ring_lookup(&ring);
        let got =
            httpsig::verify_request(&named(profile), &req.r, body.as_bytes(), now_ms, &lookup);
        let expected = expect(id, got, want);
        self.push(
            id,
            "verify-request",
            vec![
                ("profile", s(profile)),
                ("request", req.json()),
                ("body", s(body)),
                ("nowMs", J::N(now_ms)),
                ("keyring", ring),
                ("expected", expected),
            ],
        );
    }

    /// A response as received (answering `req`), verified under the named profile.
    #[allow(clippy::too_many_arguments)]
    fn verify_response_under(
        &mut self,
        profile: &str,
        id: &str,
        response: &Response,
        req: &Req,
        body: &str,
        now_ms: i64,
        ring: J,
        want: &str,
    ) {
        let lookup = ring_lookup(&ring);
        let got = httpsig::verify_response(
            &named(profile),
            response,
            &req.r,
            body.as_bytes(),
            now_ms,
            &lookup,
        );
        let expected = expect(id, got, want);
        self.push(
            id,
            "verify-response",
            vec![
                ("profile", s(profile)),
                ("response", response_json(response)),
                ("request", req.json()),
                ("body", s(body)),
                ("nowMs", J::N(now_ms)),
                ("keyring", ring),
                ("expected", expected),
            ],
        );
    }
}

/// The profile a case names.
fn named(profile: &str) -> Profile {
    match profile {
        "a2a-request" => Profile::a2a_request(),
        "a2a-response" => Profile::a2a_response(),
        "line-request" => Profile::line_request(),
        "line-response" => Profile::line_response(),
        other => panic!("no profile {other}"),
    }
}

/// The expectation of a verification that must answer `want` (`OK` or a code).
fn expect(
    id: &str,
    got: Result<httpsig::Verified, agent_intercom_core::error::Error>,
    want: &str,
) -> J {
    match got {
        Ok(v) if want == "OK" => verified(&v),
        Err(e) if e.code().as_str() == want => refused(want),
        Ok(_) => panic!("{id}: verified, expected {want}"),
        Err(e) => panic!("{id}: {e}, expected {want}"),
    }
}

fn signed_json(h: &httpsig::SignedHeaders) -> J {
    J::O(vec![
        ("contentDigest", s(&h.content_digest)),
        ("signatureInput", s(&h.signature_input)),
        ("signature", s(&h.signature)),
        ("base", s(&h.base)),
    ])
}

/// The keyring a case names, as the runners build it.
fn ring_lookup(ring: &J) -> impl Fn(&str) -> Option<httpsig::PublicKey> + use<> {
    let J::O(members) = ring else {
        panic!("a keyring is an object")
    };
    let keys: Vec<(String, httpsig::PublicKey)> = members
        .iter()
        .map(|(id, name)| {
            let J::S(name) = name else {
                panic!("a key name")
            };
            (id.to_string(), key(name).public_key())
        })
        .collect();
    move |id| keys.iter().find(|(k, _)| k == id).map(|(_, key)| *key)
}

#[path = "http_signature_vectors/cases.rs"]
mod cases;
#[path = "http_signature_vectors/line.rs"]
mod line;
#[path = "http_signature_vectors/refusals.rs"]
mod refusals;

use cases::{base_cases, request_cases, rfc_cases};
use refusals::{refusal_cases, response_cases};

/// The whole file.
pub fn generate() -> String {
    let mut cases = Cases(Vec::new());
    rfc_cases(&mut cases);
    base_cases(&mut cases);
    request_cases(&mut cases);
    refusal_cases(&mut cases);
    response_cases(&mut cases);
    line::line_cases(&mut cases);
    let mut keys = vec![("test-key-ed25519", key_entry("test-key-ed25519"))];
    keys.extend(KEY_NAMES.iter().map(|n| (*n, key_entry(n))));
    let doc = J::O(vec![
        ("corpus", s("agent-intercom-core/http-signatures-v1")),
        ("schemaVersion", J::N(1)),
        (
            "description",
            s(
                "RFC 9421 HTTP Message Signatures (Ed25519) and RFC 9530 Content-Digest, \
               as agent_intercom_core::httpsig makes and checks them: the RFC's own examples \
               (B.2.6 byte for byte, the RFC 9530 digests), signature bases of the derived \
               components, the A2A request and response profiles (docs/http-signatures.md) \
               and the outbound line's (docs/line.md): \
               signed requests and bound responses with their exact headers, then each refusal \
               with its stable code. Kinds: rfc-signature, content-digest, check-content-digest, \
               signature-base, sign-request, verify-request, sign-response, verify-response. \
               `expected` lists the members an answer must have, each equal. Headers are \
               [name, value] lines in order; a value or body is a string (its UTF-8 bytes) or \
               {base64}. A keyring maps a keyid to a key of `keys` (test keys only: the RFC's \
               test-key-ed25519, and ours, each seed SHA-256 of 'agent-intercom \
               http-signatures-v1 test key <name>'). Times are UNIX seconds, nowMs milliseconds.",
            ),
        ),
        (
            "generator",
            s(
                "cargo run -p agent-intercom-core --locked --example gen_http_signature_vectors \
               > vectors/http-signatures-v1.json",
            ),
        ),
        ("count", J::N(cases.0.len() as i64)),
        ("keys", J::O(keys)),
        ("cases", J::A(cases.0)),
    ]);
    let mut out = String::new();
    write(&mut out, &doc, 0);
    out.push('\n');
    out
}
