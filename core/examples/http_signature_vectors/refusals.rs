//! The refusal and response cases of `vectors/http-signatures-v1.json`.

use super::*;

pub(super) fn refusal_cases(cases: &mut Cases) {
    let ring = client_ring;
    let (good, _) = sign(&a2a_request(AGENT), BODY, &CLIENT);
    let input = good.get("signature-input");
    let signature = good.get("signature");
    let with_input = |text: &str| good.set("signature-input", text);
    let with_signature = |text: &str| good.set("signature", text);
    let sig_of = |n: usize| format!("a2a=:{}:", B64.encode(vec![0x5a; n]));
    let mut check = |id: &str, req: Req, code: &str| {
        cases.verify_request(id, &req, BODY, NOW_MS, ring(), code);
    };
    check(
        "missing/no-signature-fields",
        good.without("signature").without("signature-input"),
        "SIGNATURE_MISSING",
    );
    check(
        "missing/signature-input-only",
        good.without("signature"),
        "SIGNATURE_MISSING",
    );
    check(
        "missing/signature-only",
        good.without("signature-input"),
        "SIGNATURE_MISSING",
    );
    let m = "SIGNATURE_MALFORMED";
    check(
        "malformed/signature-input-syntax",
        with_input(&input.replacen("a2a=(", "a2a=((", 1)),
        m,
    );
    check(
        "malformed/signature-input-not-inner-list",
        with_input("a2a=\"@method\""),
        m,
    );
    check(
        "malformed/signature-not-byte-sequence",
        with_signature("a2a=\"AAAA\""),
        m,
    );
    check(
        "malformed/signature-bad-base64",
        with_signature("a2a=:not base64!:"),
        m,
    );
    check(
        "malformed/duplicate-label-in-signature-input",
        with_input(&format!("{input}, {input}")),
        m,
    );
    check(
        "malformed/duplicate-label-in-signature",
        with_signature(&format!("{signature}, {signature}")),
        m,
    );
    check(
        "malformed/duplicate-label-across-lines",
        good.clone().header("Signature", signature.as_str()),
        m,
    );
    check(
        "malformed/label-in-signature-not-in-input",
        with_signature(&format!("{signature}, x={}", &signature[4..])),
        m,
    );
    check(
        "malformed/label-in-input-not-in-signature",
        with_input(&format!("{input}, x=(\"@method\");created={NOW}")),
        m,
    );
    check(
        "malformed/two-signatures",
        with_input(&format!("{input}, {}", input.replacen("a2a=", "x=", 1))).set(
            "signature",
            format!("{signature}, {}", signature.replacen("a2a=", "x=", 1)),
        ),
        m,
    );
    check(
        "malformed/other-label",
        with_input(&input.replacen("a2a=", "sig1=", 1))
            .set("signature", signature.replacen("a2a=", "sig1=", 1)),
        m,
    );
    check(
        "malformed/signature-63-bytes",
        with_signature(&sig_of(63)),
        m,
    );
    check(
        "malformed/signature-65-bytes",
        with_signature(&sig_of(65)),
        m,
    );
    check("malformed/signature-empty", with_signature("a2a=::"), m);
    check(
        "malformed/alg-not-ed25519",
        with_input(&input.replace("\"ed25519\"", "\"rsa-pss-sha512\"")),
        m,
    );
    check(
        "malformed/alg-as-token",
        with_input(&input.replace("alg=\"ed25519\"", "alg=ed25519")),
        m,
    );
    check(
        "malformed/tag-wrong",
        with_input(&input.replace("agent-intercom-a2a@1", "agent-intercom-a2a@2")),
        m,
    );
    for (param, text) in [
        ("created", format!(";created={NOW}")),
        ("expires", format!(";expires={}", NOW + 60)),
        ("nonce", format!(";nonce=\"{NONCE}\"")),
        ("keyid", ";keyid=\"client-2026-b\"".to_string()),
        ("alg", ";alg=\"ed25519\"".to_string()),
        ("tag", ";tag=\"agent-intercom-a2a@1\"".to_string()),
    ] {
        assert!(input.contains(&text), "{param}");
        check(
            &format!("malformed/missing-{param}"),
            with_input(&input.replace(&text, "")),
            m,
        );
    }
    check(
        "malformed/unknown-parameter",
        with_input(&format!("{input};context=\"x\"")),
        m,
    );
    check(
        "malformed/duplicate-parameter",
        with_input(&format!("{input};created={NOW}")),
        m,
    );
    check(
        "malformed/negative-created",
        with_input(&input.replace(&format!("created={NOW}"), "created=-1")),
        m,
    );
    check(
        "malformed/content-digest-not-covered",
        with_input(&input.replace(" \"content-digest\"", "")),
        m,
    );
    check(
        "malformed/target-uri-not-covered",
        with_input(&input.replace(" \"@target-uri\"", "")),
        m,
    );
    check(
        "malformed/a2a-extensions-added-after-signing",
        good.clone()
            .header("A2A-Extensions", httpsig::EXTENSION_URI),
        m,
    );
    check(
        "malformed/component-uppercase",
        with_input(&input.replace("\"content-type\"", "\"Content-Type\"")),
        m,
    );
    check(
        "malformed/component-twice",
        with_input(&input.replace("\"content-type\"", "\"content-type\" \"content-type\"")),
        m,
    );
    check(
        "malformed/component-unknown-derived",
        with_input(&input.replace("(\"@method\"", "(\"@method\" \"@request-response\"")),
        m,
    );
    check(
        "malformed/component-trailer",
        with_input(&input.replace("\"content-type\"", "\"content-type\";tr")),
        m,
    );
    check(
        "malformed/lifetime-over-300s",
        with_input(&input.replace(
            &format!("expires={}", NOW + 60),
            &format!("expires={}", NOW + 301),
        )),
        m,
    );
    check(
        "malformed/expires-not-after-created",
        with_input(&input.replace(&format!("expires={}", NOW + 60), &format!("expires={NOW}"))),
        m,
    );
    check(
        "malformed/nonce-too-short",
        with_input(&input.replace(NONCE, "abc")),
        m,
    );
    check(
        "malformed/keyid-empty",
        with_input(&input.replace("keyid=\"client-2026-b\"", "keyid=\"\"")),
        m,
    );
    let mut latin = input.clone().into_bytes();
    let at = latin
        .windows(6)
        .position(|w| w == b"client")
        .expect("the keyid");
    latin[at] = 0xe9;
    check(
        "malformed/signature-input-not-ascii",
        good.set("signature-input", latin),
        m,
    );
    check(
        "malformed/signature-input-huge",
        with_input(&format!("{input};x=\"{}\"", "a".repeat(9000))),
        m,
    );
    check("malformed/signature-huge", with_signature(&sig_of(7000)), m);
    let d = "CONTENT_DIGEST_MISMATCH";
    cases.verify_request(
        "content-digest/body-changed",
        &good,
        &BODY.replace("hello", "hellO"),
        NOW_MS,
        ring(),
        d,
    );
    cases.verify_request("content-digest/body-empty", &good, "", NOW_MS, ring(), d);
    let mut check = |id: &str, req: Req, code: &str| {
        cases.verify_request(id, &req, BODY, NOW_MS, ring(), code);
    };
    check(
        "content-digest/field-removed",
        good.without("content-digest"),
        d,
    );
    check(
        "content-digest/md5-only",
        good.set("content-digest", "md5=:Sd/dVLAcvNLSq16eXua5uQ==:"),
        d,
    );
    check(
        "unknown-key/not-enrolled",
        sign(
            &a2a_request(AGENT),
            BODY,
            &Signer {
                key: "stranger",
                keyid: "stranger",
                ..CLIENT
            },
        )
        .0,
        "UNKNOWN_SIGNING_KEY",
    );
    let i = "SIGNATURE_INVALID";
    let moved = |uri: &str| {
        let mut r = Req::new("POST", uri);
        r.r.headers = good.r.headers.clone();
        r
    };
    let mut get = moved(AGENT);
    get.r = Request::new("PUT", AGENT).expect("a request");
    get.r.headers = good.r.headers.clone();
    check("invalid/method-changed", get, i);
    check(
        "invalid/path-changed",
        moved("https://agent.example/a2a/v2"),
        i,
    );
    check(
        "invalid/host-changed",
        moved("https://other.example/a2a"),
        i,
    );
    check(
        "invalid/port-changed",
        moved("https://agent.example:8443/a2a"),
        i,
    );
    check(
        "invalid/scheme-changed",
        moved("http://agent.example/a2a"),
        i,
    );
    check(
        "invalid/query-added",
        moved("https://agent.example/a2a?x=1"),
        i,
    );
    check(
        "invalid/content-type-changed",
        good.set("content-type", "text/plain"),
        i,
    );
    check(
        "invalid/content-type-removed",
        good.without("content-type"),
        i,
    );
    check(
        "invalid/content-type-not-ascii",
        good.set("content-type", b"application/json; q=\xe9".to_vec()),
        i,
    );
    check(
        "invalid/content-type-line-break",
        good.set("content-type", "application/json\r\nx: y"),
        i,
    );
    check(
        "invalid/a2a-version-changed",
        good.set("a2a-version", "0.3"),
        i,
    );
    check(
        "invalid/a2a-version-stripped",
        good.without("a2a-version"),
        i,
    );
    let mut flipped = B64
        .decode(&signature[5..signature.len() - 1])
        .expect("base64");
    flipped[10] ^= 1;
    check(
        "invalid/signature-bit-flipped",
        with_signature(&format!("a2a=:{}:", B64.encode(&flipped))),
        i,
    );
    check(
        "invalid/created-changed",
        with_input(&input.replace(&format!("created={NOW}"), &format!("created={}", NOW + 1))),
        i,
    );
    check(
        "invalid/nonce-changed",
        with_input(&input.replace(NONCE, "AAAAAAAAAAAAAAAAAAAAAA")),
        i,
    );
    let wrong = keyring(&[("client-2026-b", "stranger")]);
    cases.verify_request("invalid/wrong-key-enrolled", &good, BODY, NOW_MS, wrong, i);
    cases.verify_request(
        "time/expired",
        &good,
        BODY,
        (NOW + 60) * 1000,
        ring(),
        "SIGNATURE_EXPIRED",
    );
    cases.verify_request(
        "time/too-old",
        &good,
        BODY,
        NOW_MS + 30_001,
        ring(),
        "SIGNATURE_EXPIRED",
    );
    cases.verify_request(
        "time/not-yet-valid",
        &good,
        BODY,
        NOW_MS - 30_001,
        ring(),
        "SIGNATURE_NOT_YET_VALID",
    );
    let short = Signer {
        expires: NOW + 10,
        ..CLIENT
    };
    let (brief, _) = sign(&a2a_request(AGENT), BODY, &short);
    cases.verify_request(
        "time/last-millisecond-before-expiry",
        &brief,
        BODY,
        NOW_MS + 9_999,
        ring(),
        "OK",
    );
    cases.verify_request(
        "time/at-expiry",
        &brief,
        BODY,
        NOW_MS + 10_000,
        ring(),
        "SIGNATURE_EXPIRED",
    );
}

pub(super) fn response_cases(cases: &mut Cases) {
    let profile = Profile::a2a_response();
    let (request, _) = sign(&a2a_request(AGENT), BODY, &CLIENT);
    let service_ring = || keyring(&[("service-2026", "service-2026")]);
    let plain = Response::new(200)
        .expect("a status")
        .with_header("Content-Type", "application/json");
    let echoing = plain.clone().with_header("A2A-Version", "1.0");
    let mut signed_responses = Vec::new();
    for (id, response) in [
        ("response/bound-to-request", &plain),
        ("response/a2a-version-covered", &echoing),
    ] {
        let k = key(SERVICE.key);
        let headers = httpsig::sign_response(
            &profile,
            response,
            &request.r,
            REPLY.as_bytes(),
            &sign_input(&k, &SERVICE),
        )
        .expect("signable");
        let mut signed = response.clone();
        headers.apply(&mut signed.headers);
        let lookup = ring_lookup(&service_ring());
        let v = httpsig::verify_response(
            &profile,
            &signed,
            &request.r,
            REPLY.as_bytes(),
            NOW_MS + 1000,
            &lookup,
        )
        .expect("verifies");
        cases.push(
            id,
            "sign-response",
            vec![
                ("profile", s("a2a-response")),
                ("response", response_json(response)),
                ("request", request.json()),
                ("body", s(REPLY)),
                ("signer", signer_json(&SERVICE)),
                ("expected", signed_json(&headers)),
                (
                    "verify",
                    J::O(vec![
                        ("nowMs", J::N(NOW_MS + 1000)),
                        ("keyring", service_ring()),
                        ("expected", verified(&v)),
                    ]),
                ),
            ],
        );
        signed_responses.push(signed);
    }
    let signed = &signed_responses[0];
    let other = Signer {
        nonce: "b3RoZXItcmVxdWVzdC0wMQ",
        ..CLIENT
    };
    let (another, _) = sign(&a2a_request(AGENT), BODY, &other);
    let mut status = signed.clone();
    status = {
        let mut r = Response::new(500).expect("a status");
        r.headers = status.headers.clone();
        r
    };
    let mut request_tag = signed.clone();
    let tagged = request_tag
        .headers
        .values("signature-input")
        .next()
        .map(|v| {
            String::from_utf8(v.to_vec())
                .expect("ASCII")
                .replace(httpsig::RESPONSE_TAG, httpsig::REQUEST_TAG)
        });
    request_tag.headers.remove("signature-input");
    request_tag
        .headers
        .push("Signature-Input", tagged.expect("an input"));
    let mut unsigned = signed.clone();
    unsigned.headers.remove("signature");
    unsigned.headers.remove("signature-input");
    let rows: [(&str, &Response, &Req, &str, &str); 7] = [
        ("response/verifies", signed, &request, REPLY, "OK"),
        (
            "response/for-another-request",
            signed,
            &another,
            REPLY,
            "SIGNATURE_INVALID",
        ),
        (
            "response/request-unsigned",
            signed,
            &a2a_request(AGENT),
            REPLY,
            "SIGNATURE_INVALID",
        ),
        (
            "response/status-changed",
            &status,
            &request,
            REPLY,
            "SIGNATURE_INVALID",
        ),
        (
            "response/body-changed",
            signed,
            &request,
            BODY,
            "CONTENT_DIGEST_MISMATCH",
        ),
        (
            "response/request-tag",
            &request_tag,
            &request,
            REPLY,
            "SIGNATURE_MALFORMED",
        ),
        (
            "response/unsigned",
            &unsigned,
            &request,
            REPLY,
            "SIGNATURE_MISSING",
        ),
    ];
    for (id, response, req, body, want) in rows {
        let lookup = ring_lookup(&service_ring());
        let got = httpsig::verify_response(
            &profile,
            response,
            &req.r,
            body.as_bytes(),
            NOW_MS + 1000,
            &lookup,
        );
        let expected = match got {
            Ok(v) if want == "OK" => verified(&v),
            Err(e) if e.code().as_str() == want => refused(want),
            other => panic!("{id}: {other:?}, expected {want}"),
        };
        cases.push(
            id,
            "verify-response",
            vec![
                ("profile", s("a2a-response")),
                ("response", response_json(response)),
                ("request", req.json()),
                ("body", s(body)),
                ("nowMs", J::N(NOW_MS + 1000)),
                ("keyring", service_ring()),
                ("expected", expected),
            ],
        );
    }
    // A request's signature presented as a response's: refused by its tag and components.
    let as_response = {
        let mut r = Response::new(200).expect("a status");
        r.headers = request.r.headers.clone();
        r
    };
    let lookup = ring_lookup(&client_ring());
    let e = httpsig::verify_response(
        &profile,
        &as_response,
        &request.r,
        BODY.as_bytes(),
        NOW_MS,
        &lookup,
    )
    .expect_err("a request signature is no response signature");
    cases.push(
        "response/request-signature-replayed-as-response",
        "verify-response",
        vec![
            ("profile", s("a2a-response")),
            ("response", response_json(&as_response)),
            ("request", request.json()),
            ("body", s(BODY)),
            ("nowMs", J::N(NOW_MS)),
            ("keyring", client_ring()),
            ("expected", refused(e.code().as_str())),
        ],
    );
}
