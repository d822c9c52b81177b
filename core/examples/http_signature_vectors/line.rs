//! The outbound line's profile (`rfc9421-ed25519@1`, docs/line.md): a signed request to a port
//! other than 443 and to 443 itself (which `@authority` drops), an empty query, parameters in
//! another order than ours (the order the Python library writes), a response bound to its
//! request, and a response after the peer's key was rotated.

use super::{
    BODY, Cases, J, NOW, NOW_MS, REPLY, Req, Signer, key, keyring, ring_lookup, s, sign_input,
    signed_json, signer_json, verified,
};
use agent_intercom_core::httpsig::{self, Component, Message, Param, Profile, Response};

const WORKLOAD: &str = "5f0c1a7e-1d2b-4c3a-9e8f-0a1b2c3d4e5f";
const PEER: &str = "0b6f8e2a-7c4d-4e1f-8a9b-1c2d3e4f5a6b";

const WORKLOAD_SIGNER: Signer = Signer {
    key: "client-2026-a",
    keyid: "workload-2026",
    created: NOW,
    expires: NOW + 30,
    nonce: "bGluZS1yZXF1ZXN0LTAx",
};

const PEER_SIGNER: Signer = Signer {
    key: "service-2026",
    keyid: "peer-2026",
    created: NOW + 1,
    expires: NOW + 61,
    nonce: "bGluZS1yZXNwb25zZS0x",
};

const ROTATED_SIGNER: Signer = Signer {
    key: "stranger",
    keyid: "peer-2027",
    ..PEER_SIGNER
};

/// A line request to `uri`, unsigned: the headers the line sends, in its order.
fn line_request(uri: &str) -> Req {
    Req::new("POST", uri)
        .header("Content-Type", "application/json")
        .header("A2A-Version", "1.0")
        .header("A2A-Extensions", httpsig::LINE_EXTENSION_URI)
        .header("Intercom-Issuer", WORKLOAD)
        .header("Intercom-Audience", PEER)
}

fn workload_ring() -> J {
    keyring(&[("workload-2026", "client-2026-a")])
}

fn peer_ring() -> J {
    keyring(&[("peer-2026", "service-2026")])
}

fn rotated_ring() -> J {
    keyring(&[("peer-2027", "stranger")])
}

fn line_response() -> Response {
    Response::new(200)
        .expect("a status")
        .with_header("Content-Type", "application/json")
        .with_header("Intercom-Issuer", PEER)
        .with_header("Intercom-Audience", WORKLOAD)
}

/// Signs `req` under the line's request profile.
fn sign_line(req: &Req, signer: &Signer) -> (Req, httpsig::SignedHeaders) {
    let k = key(signer.key);
    let signed = httpsig::sign_request(
        &Profile::line_request(),
        &req.r,
        BODY.as_bytes(),
        &sign_input(&k, signer),
    )
    .expect("signable");
    let mut out = req.clone();
    signed.apply(&mut out.r.headers);
    (out, signed)
}

/// `params` in the order the Python library writes them: created, keyid, alg, expires, nonce,
/// tag.
fn shuffled(signer: &Signer, tag: &str) -> Vec<Param> {
    vec![
        Param::Created(signer.created),
        Param::KeyId(signer.keyid.to_string()),
        Param::Alg(httpsig::ALGORITHM.to_string()),
        Param::Expires(signer.expires),
        Param::Nonce(signer.nonce.to_string()),
        Param::Tag(tag.to_string()),
    ]
}

/// Signs `message` (already carrying its Content-Digest) over `components` with the parameters
/// in the shuffled order: the Signature-Input and Signature lines.
fn sign_shuffled(message: Message<'_>, components: Vec<Component>, signer: &Signer) -> [String; 2] {
    let params = httpsig::SignatureParams {
        components,
        params: shuffled(signer, httpsig::LINE_TAG),
    };
    let base = httpsig::signature_base(message, &params).expect("a base");
    let signature = key(signer.key).sign(base.as_bytes());
    [
        params.to_field(httpsig::LABEL).expect("a field"),
        httpsig::signature_field(httpsig::LABEL, &signature).expect("a field"),
    ]
}

pub(super) fn line_cases(cases: &mut Cases) {
    let request_profile = Profile::line_request();
    let response_profile = Profile::line_response();
    // Signed requests: port 8443 is kept in @authority, 443 is dropped, an empty query is `?`.
    let mut signed_requests = Vec::new();
    for (id, uri) in [
        (
            "line/request-port-8443",
            "https://peer.example:8443/a2a/jsonrpc",
        ),
        (
            "line/request-port-443",
            "https://peer.example:443/a2a/jsonrpc",
        ),
        (
            "line/request-empty-query",
            "https://peer.example:8443/a2a/jsonrpc?",
        ),
    ] {
        let req = line_request(uri);
        let (signed, headers) = sign_line(&req, &WORKLOAD_SIGNER);
        let lookup = ring_lookup(&workload_ring());
        let v = httpsig::verify_request(
            &request_profile,
            &signed.r,
            BODY.as_bytes(),
            NOW_MS,
            &lookup,
        )
        .expect("verifies");
        cases.push(
            id,
            "sign-request",
            vec![
                ("profile", s("line-request")),
                ("request", req.json()),
                ("body", s(BODY)),
                ("signer", signer_json(&WORKLOAD_SIGNER)),
                ("expected", signed_json(&headers)),
                (
                    "verify",
                    J::O(vec![
                        ("nowMs", J::N(NOW_MS)),
                        ("keyring", workload_ring()),
                        ("expected", verified(&v)),
                    ]),
                ),
            ],
        );
        signed_requests.push(signed);
    }
    let at_8443 = &signed_requests[0];
    let at_443 = &signed_requests[1];
    // As a server sees them: the 443 request arrives without its port; a query added to a
    // request signed without one no longer verifies; another peer's authority neither.
    let moved = |req: &Req, uri: &str| {
        let mut out = Req::new("POST", uri);
        out.r.headers = req.r.headers.clone();
        out
    };
    let rows: [(&str, Req, &str); 4] = [
        (
            "line/request-port-443-received-without-port",
            moved(at_443, "https://peer.example/a2a/jsonrpc"),
            "OK",
        ),
        (
            "line/request-query-smuggled",
            moved(at_8443, "https://peer.example:8443/a2a/jsonrpc?task=other"),
            "SIGNATURE_INVALID",
        ),
        (
            "line/request-other-authority",
            moved(at_8443, "https://peer.example:9443/a2a/jsonrpc"),
            "SIGNATURE_INVALID",
        ),
        (
            "line/request-audience-changed",
            at_8443.set("Intercom-Audience", WORKLOAD),
            "SIGNATURE_INVALID",
        ),
    ];
    for (id, req, want) in rows {
        cases.verify_request_under(
            "line-request",
            id,
            &req,
            BODY,
            NOW_MS,
            workload_ring(),
            want,
        );
    }
    // Parameters in the Python library's order verify: the base is rebuilt from the bytes.
    let plain = line_request("https://peer.example:8443/a2a/jsonrpc");
    let mut digested = plain.clone();
    digested.r.headers.push(
        "content-digest",
        httpsig::content_digest(httpsig::DigestAlgorithm::Sha256, BODY.as_bytes()),
    );
    let [input, signature] = sign_shuffled(
        Message::Request(&digested.r),
        request_profile.components.clone(),
        &WORKLOAD_SIGNER,
    );
    let shuffled_request = digested
        .header("Signature-Input", input)
        .header("Signature", signature);
    cases.verify_request_under(
        "line-request",
        "line/request-shuffled-parameters",
        &shuffled_request,
        BODY,
        NOW_MS,
        workload_ring(),
        "OK",
    );
    // A response bound to the 8443 request, then the same response against another request,
    // after rotation, and with shuffled parameters.
    let response = line_response();
    let mut bound = Vec::new();
    for (id, signer, ring) in [
        ("line/response-bound-to-request", &PEER_SIGNER, peer_ring()),
        ("line/response-rotated-key", &ROTATED_SIGNER, rotated_ring()),
    ] {
        let k = key(signer.key);
        let headers = httpsig::sign_response(
            &response_profile,
            &response,
            &at_8443.r,
            REPLY.as_bytes(),
            &sign_input(&k, signer),
        )
        .expect("signable");
        let mut signed = response.clone();
        headers.apply(&mut signed.headers);
        let lookup = ring_lookup(&ring);
        let v = httpsig::verify_response(
            &response_profile,
            &signed,
            &at_8443.r,
            REPLY.as_bytes(),
            NOW_MS + 1000,
            &lookup,
        )
        .expect("verifies");
        cases.push(
            id,
            "sign-response",
            vec![
                ("profile", s("line-response")),
                ("response", super::response_json(&response)),
                ("request", at_8443.json()),
                ("body", s(REPLY)),
                ("signer", signer_json(signer)),
                ("expected", signed_json(&headers)),
                (
                    "verify",
                    J::O(vec![
                        ("nowMs", J::N(NOW_MS + 1000)),
                        ("keyring", ring),
                        ("expected", verified(&v)),
                    ]),
                ),
            ],
        );
        bound.push(signed);
    }
    let old = &bound[0];
    let other_nonce = Signer {
        nonce: "bGluZS1yZXF1ZXN0LTAy",
        ..WORKLOAD_SIGNER
    };
    let (second, _) = sign_line(
        &line_request("https://peer.example:8443/a2a/jsonrpc"),
        &other_nonce,
    );
    let mut digested_response = response.clone();
    digested_response.headers.push(
        "content-digest",
        httpsig::content_digest(httpsig::DigestAlgorithm::Sha256, REPLY.as_bytes()),
    );
    let request_for_base = at_8443.r.clone();
    let [input, signature] = sign_shuffled(
        Message::Response {
            response: &digested_response,
            request: Some(&request_for_base),
        },
        response_profile.components.clone(),
        &PEER_SIGNER,
    );
    let shuffled_response = digested_response
        .with_header("Signature-Input", input)
        .with_header("Signature", signature);
    let rows: [(&str, &Response, &Req, J, &str); 5] = [
        (
            "line/response-replayed-for-another-request",
            old,
            &second,
            peer_ring(),
            "SIGNATURE_INVALID",
        ),
        (
            "line/response-old-key-after-rotation",
            old,
            at_8443,
            rotated_ring(),
            "UNKNOWN_SIGNING_KEY",
        ),
        (
            "line/response-shuffled-parameters",
            &shuffled_response,
            at_8443,
            peer_ring(),
            "OK",
        ),
        (
            "line/response-to-the-443-request",
            old,
            at_443,
            peer_ring(),
            "SIGNATURE_INVALID",
        ),
        (
            "line/response-under-the-a2a-profile",
            old,
            at_8443,
            peer_ring(),
            "SIGNATURE_MALFORMED",
        ),
    ];
    for (id, response, req, ring, want) in rows {
        let profile_name = if id.ends_with("a2a-profile") {
            "a2a-response"
        } else {
            "line-response"
        };
        cases.verify_response_under(
            profile_name,
            id,
            response,
            req,
            REPLY,
            NOW_MS + 1000,
            ring,
            want,
        );
    }
}
