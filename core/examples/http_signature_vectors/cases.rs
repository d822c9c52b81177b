//! The RFC, signature-base and request cases of `vectors/http-signatures-v1.json`.

use super::*;

const B26_INPUT: &str = "sig-b26=(\"date\" \"@method\" \"@path\" \"@authority\" \
    \"content-type\" \"content-length\");created=1618884473;keyid=\"test-key-ed25519\"";
const B26_SIGNATURE: &str = "sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9\
    EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:";

/// RFC 9530's sha-512 of `{"hello": "world"}` and LF.
const SHA512_HELLO_LF: &str = "sha-512=:YMAam51Jz/jOATT6/zvHrLVgOYTGFy1d6GJiOHTohq4yP+pgk4vf2a\
    CsyRZOtw8MjkM7iw7yZ/WkppmM44T3qg==:";
/// RFC 9421 B.2's sha-512 of `{"hello": "world"}`.
const SHA512_HELLO: &str = "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIi\
    Yllu7BNNyealdVLvRwEmTHWXvJwew==:";

/// RFC 9421 B.2's `test-request` (its 18-byte body is `{"hello": "world"}`).
fn rfc_request() -> Req {
    Req::new("POST", "https://example.com/foo?param=Value&Pet=dog")
        .header("Host", "example.com")
        .header("Date", "Tue, 20 Apr 2021 02:07:55 GMT")
        .header("Content-Type", "application/json")
        .header(
            "Content-Digest",
            "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvR\
             wEmTHWXvJwew==:",
        )
        .header("Content-Length", "18")
}

pub(super) fn rfc_cases(cases: &mut Cases) {
    let request = rfc_request();
    let with_input = request.clone().header("Signature-Input", B26_INPUT);
    let inputs = httpsig::parse_signature_input(&with_input.r.headers).expect("the RFC's input");
    let base = httpsig::signature_base(Message::Request(&with_input.r), &inputs[0].1)
        .expect("the RFC's base");
    assert_eq!(base.len(), 284);
    cases.push(
        "rfc9421/b.2.6-ed25519",
        "rfc-signature",
        vec![
            ("message", request.json()),
            ("label", s("sig-b26")),
            ("signatureInput", s(B26_INPUT)),
            ("signature", s(B26_SIGNATURE)),
            ("key", s("test-key-ed25519")),
            (
                "expected",
                J::O(vec![
                    ("base", s(&base)),
                    ("baseLength", J::N(284)),
                    (
                        "baseSha256",
                        s("e6402577f54303accfda63dfbde1a7b8c5e5e6f3f7898637b7d78dc07ee1896a"),
                    ),
                ]),
            ),
        ],
    );
    let hello = "{\"hello\": \"world\"}";
    let digests = [
        (
            "rfc9530/sha-256-hello-lf",
            "sha-256",
            format!("{hello}\n"),
            "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:",
        ),
        (
            "rfc9530/sha-512-hello-lf",
            "sha-512",
            format!("{hello}\n"),
            SHA512_HELLO_LF,
        ),
        (
            "rfc9530/sha-256-empty",
            "sha-256",
            String::new(),
            "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:",
        ),
        (
            "rfc9421/b.2-sha-512-hello",
            "sha-512",
            hello.to_string(),
            SHA512_HELLO,
        ),
        (
            "rfc9421/b.2-sha-256-hello",
            "sha-256",
            hello.to_string(),
            "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:",
        ),
    ];
    for (id, alg, body, expected) in digests {
        let algorithm = DigestAlgorithm::from_name(alg).expect("known");
        assert_eq!(
            httpsig::content_digest(algorithm, body.as_bytes()),
            expected,
            "{id}"
        );
        cases.push(
            id,
            "content-digest",
            vec![
                ("algorithm", s(alg)),
                ("body", s(&body)),
                ("expected", s(expected)),
            ],
        );
    }
    let lf = format!("{hello}\n");
    let both = "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:, \
        sha-512=:YMAam51Jz/jOATT6/zvHrLVgOYTGFy1d6GJiOHTohq4yP+pgk4vf2aCsyRZOtw8MjkM7iw7yZ/WkppmM\
        44T3qg==:";
    let checks: [(&str, J, &str, J); 10] = [
        (
            "content-digest/both-algorithms",
            s(both),
            &lf,
            J::O(vec![
                ("ok", J::B(true)),
                ("algorithms", J::A(vec![s("sha-256"), s("sha-512")])),
            ]),
        ),
        (
            "content-digest/body-differs",
            s("sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:"),
            hello,
            refused("CONTENT_DIGEST_MISMATCH"),
        ),
        (
            "content-digest/md5-refused",
            s("md5=:Sd/dVLAcvNLSq16eXua5uQ==:"),
            &lf,
            refused("CONTENT_DIGEST_MISMATCH"),
        ),
        (
            "content-digest/unknown-beside-known",
            s("sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:, crc32c=:AAAAAA==:"),
            &lf,
            refused("CONTENT_DIGEST_MISMATCH"),
        ),
        (
            "content-digest/algorithm-twice",
            s("sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:, sha-256=:AA==:"),
            &lf,
            refused("CONTENT_DIGEST_MISMATCH"),
        ),
        (
            "content-digest/not-a-byte-sequence",
            s("sha-256=\"RK/0qy18MlBSVnWgjwz6lZEWjP\""),
            &lf,
            refused("CONTENT_DIGEST_MISMATCH"),
        ),
        (
            "content-digest/bad-syntax",
            s("sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg="),
            &lf,
            refused("CONTENT_DIGEST_MISMATCH"),
        ),
        (
            "content-digest/empty-field",
            s(""),
            &lf,
            refused("CONTENT_DIGEST_MISMATCH"),
        ),
        (
            "content-digest/absent",
            J::Null,
            &lf,
            refused("CONTENT_DIGEST_MISMATCH"),
        ),
        (
            "content-digest/not-ascii",
            J::O(vec![("base64", s("c2hhLTI1Nj06w6k6"))]),
            &lf,
            refused("CONTENT_DIGEST_MISMATCH"),
        ),
    ];
    for (id, field, body, expected) in checks {
        cases.push(
            id,
            "check-content-digest",
            vec![("field", field), ("body", s(body)), ("expected", expected)],
        );
    }
}

/// Signature bases of the derived components (a Signature-Input of our own, no signature).
pub(super) fn base_cases(cases: &mut Cases) {
    let all = "(\"@method\" \"@target-uri\" \"@authority\" \"@scheme\" \"@request-target\" \
        \"@path\" \"@query\");created=1767225600";
    let rows: [(&str, Req, String); 6] = [
        (
            "base/port-443-omitted",
            Req::new("POST", "https://Agent.Example:443/a2a"),
            format!("b={all}"),
        ),
        (
            "base/port-8443-kept",
            Req::new("POST", "https://agent.example:8443/a2a"),
            format!("b={all}"),
        ),
        (
            "base/empty-query",
            Req::new("GET", "https://agent.example/a2a?"),
            format!("b={all}"),
        ),
        (
            "base/no-path",
            Req::new("GET", "http://agent.example:80"),
            format!("b={all}"),
        ),
        (
            "base/query-params-reencoded",
            Req::new(
                "GET",
                concat!(
                    "https://agent.example/parameters?var=this%20is%20a%20big%0Amultiline",
                    "%20value&bar=with+plus+whitespace&fa%C3%A7ade%22%3A%20=something"
                ),
            ),
            "b=(\"@query-param\";name=\"var\" \"@query-param\";name=\"bar\" \
             \"@query-param\";name=\"fa%C3%A7ade%22%3A%20\" \"@query\");created=1767225600"
                .to_string(),
        ),
        (
            "base/fields-trimmed-joined-bs-key",
            Req::new("POST", AGENT)
                .header("X-Trace", "  a ")
                .header("x-trace", "b\t")
                .header("X-Bytes", b"caf\xc3\xa9".to_vec())
                .header("Example-Dict", "a=1, b=2;x=1;y=2, c=(a   b c)"),
            "b=(\"x-trace\" \"x-bytes\";bs \"example-dict\";key=\"c\" \"example-dict\";key=\"b\");\
             created=1767225600;keyid=\"k\""
                .to_string(),
        ),
    ];
    for (id, req, input) in rows {
        base_case(
            cases,
            id,
            req.json(),
            &req.r.headers,
            Message::Request(&req.r),
            &input,
        );
    }
    let refusals: [(&str, Req, &str); 5] = [
        (
            "base/refused-field-absent",
            Req::new("POST", AGENT),
            "b=(\"content-type\")",
        ),
        (
            "base/refused-not-ascii",
            Req::new("POST", AGENT).header("X-Name", b"caf\xc3\xa9".to_vec()),
            "b=(\"x-name\")",
        ),
        (
            "base/refused-line-break",
            Req::new("POST", AGENT).header("X-Name", "a\r\nb"),
            "b=(\"x-name\")",
        ),
        (
            "base/refused-status-in-request",
            Req::new("POST", AGENT),
            "b=(\"@status\")",
        ),
        (
            "base/refused-query-param-twice",
            Req::new("GET", "https://h/?a=1&a=2"),
            "b=(\"@query-param\";name=\"a\")",
        ),
    ];
    for (id, req, input) in refusals {
        base_case(
            cases,
            id,
            req.json(),
            &req.r.headers,
            Message::Request(&req.r),
            input,
        );
    }
    let request = a2a_request(AGENT);
    let (signed, _) = sign(&request, BODY, &CLIENT);
    let response = Response::new(200)
        .expect("a status")
        .with_header("Content-Type", "application/json");
    let mut message = response_json(&response);
    if let J::O(members) = &mut message {
        members.push(("request", signed.json()));
    }
    let input = "b=(\"@status\" \"@method\";req \"@authority\";req \"signature\";req;key=\"a2a\");\
                 created=1767225601";
    let m = Message::Response {
        response: &response,
        request: Some(&signed.r),
    };
    base_case(
        cases,
        "base/response-with-req",
        message,
        &response.headers,
        m,
        input,
    );
}

fn base_case(
    cases: &mut Cases,
    id: &str,
    message: J,
    headers: &Headers,
    m: Message<'_>,
    input: &str,
) {
    let mut holder = headers.clone();
    holder.push("signature-input", input);
    let expected = match httpsig::parse_signature_input(&holder)
        .and_then(|i| httpsig::signature_base(m, &i[0].1))
    {
        Ok(base) => J::O(vec![("ok", J::B(true)), ("base", s(&base))]),
        Err(e) => refused(e.code().as_str()),
    };
    let refusal = id.starts_with("base/refused");
    assert_eq!(
        matches!(&expected, J::O(m) if matches!(m[0].1, J::B(false))),
        refusal,
        "{id}"
    );
    cases.push(
        id,
        "signature-base",
        vec![
            ("message", message),
            ("label", s("b")),
            ("signatureInput", s(input)),
            ("expected", expected),
        ],
    );
}

pub(super) fn request_cases(cases: &mut Cases) {
    let ring = client_ring;
    cases.sign_request(
        "request/port-443-omitted",
        &a2a_request("https://agent.example:443/a2a"),
        &CLIENT,
        NOW_MS,
        ring(),
    );
    cases.sign_request(
        "request/port-8443-kept",
        &a2a_request("https://agent.example:8443/a2a"),
        &CLIENT,
        NOW_MS,
        ring(),
    );
    cases.sign_request(
        "request/empty-query",
        &a2a_request("https://agent.example/a2a?"),
        &CLIENT,
        NOW_MS,
        ring(),
    );
    cases.sign_request(
        "request/a2a-extensions-covered",
        &a2a_request(AGENT).header("A2A-Extensions", httpsig::EXTENSION_URI),
        &CLIENT,
        NOW_MS,
        ring(),
    );
    cases.sign_request(
        "request/no-a2a-headers",
        &Req::new("POST", AGENT).header("Content-Type", "application/json"),
        &CLIENT,
        NOW_MS,
        ring(),
    );
    cases.sign_request(
        "request/skew-tolerated",
        &a2a_request(AGENT),
        &CLIENT,
        NOW_MS - 30_000,
        ring(),
    );
    cases.sign_request(
        "request/age-limit",
        &a2a_request(AGENT),
        &CLIENT,
        NOW_MS + 30_000,
        ring(),
    );
    let rotated = keyring(&[("client-2026-b", "client-2026-b")]);
    cases.sign_request(
        "rotation/new-key-accepted",
        &a2a_request(AGENT),
        &CLIENT,
        NOW_MS,
        rotated,
    );
    let old = Signer {
        key: "client-2026-a",
        keyid: "client-2026-a",
        ..CLIENT
    };
    let (by_old, _) = sign(&a2a_request(AGENT), BODY, &old);
    let before = keyring(&[("client-2026-a", "client-2026-a")]);
    cases.verify_request(
        "rotation/old-key-before-rotation",
        &by_old,
        BODY,
        NOW_MS,
        before,
        "OK",
    );
    cases.verify_request(
        "rotation/old-key-refused",
        &by_old,
        BODY,
        NOW_MS,
        ring(),
        "UNKNOWN_SIGNING_KEY",
    );
    let swapped = Signer {
        key: "client-2026-a",
        ..CLIENT
    };
    let (by_swapped, _) = sign(&a2a_request(AGENT), BODY, &swapped);
    cases.verify_request(
        "rotation/new-keyid-old-key",
        &by_swapped,
        BODY,
        NOW_MS,
        ring(),
        "SIGNATURE_INVALID",
    );
    // The same signature with its parameters and components in other orders, and a sha-512
    // digest: the base is rebuilt from the received Signature-Input, as written.
    let python_order = ["created", "keyid", "alg", "expires", "nonce", "tag"];
    cases.verify_request(
        "request/shuffled-parameters",
        &hand_signed(&python_order, false, DigestAlgorithm::Sha256),
        BODY,
        NOW_MS,
        ring(),
        "OK",
    );
    cases.verify_request(
        "request/shuffled-components",
        &hand_signed(&PARAM_ORDER_OF_PROFILE, true, DigestAlgorithm::Sha256),
        BODY,
        NOW_MS,
        ring(),
        "OK",
    );
    cases.verify_request(
        "request/sha-512-digest",
        &hand_signed(&PARAM_ORDER_OF_PROFILE, false, DigestAlgorithm::Sha512),
        BODY,
        NOW_MS,
        ring(),
        "OK",
    );
}

const PARAM_ORDER_OF_PROFILE: [&str; 6] = httpsig::PARAM_ORDER;

/// A request signed through the RFC layer with the parameters in `order`, the components
/// reversed (and `content-length` added) when `shuffle`, and a Content-Digest in `digest`.
fn hand_signed(order: &[&str], shuffle: bool, digest: DigestAlgorithm) -> Req {
    let mut req = a2a_request(AGENT)
        .header("Content-Length", BODY.len().to_string())
        .header(
            "Content-Digest",
            httpsig::content_digest(digest, BODY.as_bytes()),
        );
    let mut components: Vec<Component> = [
        "@method",
        "@target-uri",
        "content-type",
        "content-digest",
        "a2a-version",
    ]
    .into_iter()
    .map(Component::new)
    .collect();
    if shuffle {
        components.reverse();
        components.insert(2, Component::new("content-length"));
    }
    let params = order
        .iter()
        .map(|name| match *name {
            "created" => Param::Created(CLIENT.created),
            "expires" => Param::Expires(CLIENT.expires),
            "nonce" => Param::Nonce(CLIENT.nonce.to_string()),
            "keyid" => Param::KeyId(CLIENT.keyid.to_string()),
            "alg" => Param::Alg("ed25519".to_string()),
            _ => Param::Tag(httpsig::REQUEST_TAG.to_string()),
        })
        .collect();
    let params = SignatureParams { components, params };
    let (input, signature, _) =
        httpsig::sign(Message::Request(&req.r), "a2a", &params, &key(CLIENT.key))
            .expect("signable");
    req = req
        .header("Signature-Input", input)
        .header("Signature", signature);
    req
}
