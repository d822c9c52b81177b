//! The RFC examples byte for byte, the profiles' round trips and refusals, and arbitrary bytes in
//! every field the verifier reads (never a panic, always one of the signature codes).

use sha2::{Digest as _, Sha256};

use super::*;
use crate::error::ErrorCode;

const RFC_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----\n\
    MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n\
    -----END PUBLIC KEY-----\n";
const RFC_PRIVATE: &str = "-----BEGIN PRIVATE KEY-----\n\
    MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n\
    -----END PRIVATE KEY-----\n";

const B26_INPUT: &str = "sig-b26=(\"date\" \"@method\" \"@path\" \"@authority\" \
    \"content-type\" \"content-length\");created=1618884473;keyid=\"test-key-ed25519\"";
const B26_SIGNATURE: &str = "sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9\
    EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:";
const B26_BASE: &str = "\"date\": Tue, 20 Apr 2021 02:07:55 GMT\n\
\"@method\": POST\n\
\"@path\": /foo\n\
\"@authority\": example.com\n\
\"content-type\": application/json\n\
\"content-length\": 18\n\
\"@signature-params\": (\"date\" \"@method\" \"@path\" \"@authority\" \"content-type\" \
\"content-length\");created=1618884473;keyid=\"test-key-ed25519\"";

/// RFC 9421 Appendix B.2's `test-request`.
fn rfc_request() -> Request {
    Request::new("POST", "https://example.com/foo?param=Value&Pet=dog")
        .unwrap()
        .with_header("Host", "example.com")
        .with_header("Date", "Tue, 20 Apr 2021 02:07:55 GMT")
        .with_header("Content-Type", "application/json")
        .with_header(
            "Content-Digest",
            "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwE\
             mTHWXvJwew==:",
        )
        .with_header("Content-Length", "18")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn rfc9421_b26_reproduces_byte_for_byte() {
    let request = rfc_request()
        .with_header("Signature-Input", B26_INPUT)
        .with_header("Signature", B26_SIGNATURE);
    let message = Message::Request(&request);
    let inputs = parse_signature_input(&request.headers).unwrap();
    let (label, params) = &inputs[0];
    assert_eq!(label, "sig-b26");
    assert_eq!(params.to_field(label).unwrap(), B26_INPUT);
    let base = signature_base(message, params).unwrap();
    assert_eq!(base, B26_BASE);
    assert_eq!(base.len(), 284);
    assert_eq!(
        hex(&Sha256::digest(base.as_bytes())),
        "e6402577f54303accfda63dfbde1a7b8c5e5e6f3f7898637b7d78dc07ee1896a"
    );
    let private = SigningKey::from_pem(RFC_PRIVATE).unwrap();
    let (input, signature, signed_base) = sign(
        Message::Request(&rfc_request()),
        "sig-b26",
        params,
        &private,
    )
    .unwrap();
    assert_eq!(
        (input.as_str(), signature.as_str()),
        (B26_INPUT, B26_SIGNATURE)
    );
    assert_eq!(signed_base, B26_BASE);
    let public = PublicKey::from_pem(RFC_PUBLIC).unwrap();
    let (verified, _) = verify(message, "sig-b26", &public).unwrap();
    assert_eq!(verified.keyid(), Some("test-key-ed25519"));
    assert_eq!(verified.created(), Some(1_618_884_473));
    // One byte of a covered field changed: the same signature no longer verifies.
    let mut changed = rfc_request().with_header("Signature-Input", B26_INPUT);
    changed.headers.push("Signature", B26_SIGNATURE);
    changed.headers.remove("date");
    changed
        .headers
        .push("Date", "Tue, 20 Apr 2021 02:07:56 GMT");
    let e = verify(Message::Request(&changed), "sig-b26", &public).unwrap_err();
    assert_eq!(e.code(), ErrorCode::SignatureInvalid);
}

#[test]
fn rfc9530_digests() {
    let hello = b"{\"hello\": \"world\"}\n";
    assert_eq!(
        content_digest(DigestAlgorithm::Sha256, hello),
        "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:"
    );
    assert_eq!(
        content_digest(DigestAlgorithm::Sha512, hello),
        "sha-512=:YMAam51Jz/jOATT6/zvHrLVgOYTGFy1d6GJiOHTohq4yP+pgk4vf2aCsyRZOtw8MjkM7iw7yZ/WkppmM\
         44T3qg==:"
    );
    assert_eq!(
        content_digest(DigestAlgorithm::Sha256, b""),
        "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:"
    );
    let both = Headers::new();
    let mut both = both;
    both.push(
        "Content-Digest",
        format!(
            "{}, {}",
            content_digest(DigestAlgorithm::Sha256, hello),
            content_digest(DigestAlgorithm::Sha512, hello)
        ),
    );
    let checked = check_content_digest(&both, hello, &DigestAlgorithm::all()).unwrap();
    assert_eq!(checked, DigestAlgorithm::all());
    let refused = |value: &str, body: &[u8]| {
        let mut h = Headers::new();
        h.push("content-digest", value);
        check_content_digest(&h, body, &DigestAlgorithm::all())
            .unwrap_err()
            .code()
    };
    let mismatch = ErrorCode::ContentDigestMismatch;
    assert_eq!(
        refused(
            "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:",
            b"x"
        ),
        mismatch
    );
    assert_eq!(refused("md5=:CY9rzUYh03PK3k6DJie09g==:", b"test"), mismatch);
    assert_eq!(
        refused(
            "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:, md5=:AA==:",
            b"{\"hello\": \"world\"}"
        ),
        mismatch
    );
    assert_eq!(refused("sha-256=\"RK\"", hello), mismatch);
    assert_eq!(refused("sha-256=:RK/0:;x", hello), mismatch);
    assert_eq!(refused("", hello), mismatch);
    assert_eq!(
        refused(
            "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:, sha-256=:AA==:",
            b""
        ),
        mismatch
    );
    let none = check_content_digest(&Headers::new(), b"", &DigestAlgorithm::all()).unwrap_err();
    assert_eq!(none.code(), mismatch);
}

const NOW: i64 = 1_767_225_600;

fn key(n: u8) -> SigningKey {
    SigningKey::from_seed(&[n; 32]).unwrap()
}

fn a2a_request() -> Request {
    Request::new("POST", "https://agent.example:8443/a2a")
        .unwrap()
        .with_header("Content-Type", "application/json")
        .with_header("A2A-Version", "1.0")
}

const BODY: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t-1"}}"#;
const NONCE: &str = "AAECAwQFBgcICQoLDA0ODw";

fn input(k: &SigningKey) -> SignInput<'_> {
    SignInput {
        key: k,
        keyid: "peer-1",
        created: NOW,
        expires: NOW + 60,
        nonce: NONCE,
    }
}

fn signed(request: &Request, k: &SigningKey) -> Request {
    let mut out = request.clone();
    sign_request(&Profile::a2a_request(), request, BODY, &input(k))
        .unwrap()
        .apply(&mut out.headers);
    out
}

fn lookup(k: &SigningKey) -> impl Fn(&str) -> Option<PublicKey> + '_ {
    move |id| (id == "peer-1").then(|| k.public_key())
}

#[test]
fn a2a_requests_sign_and_verify() {
    let k = key(1);
    let request = signed(&a2a_request(), &k);
    let input_line: Vec<&[u8]> = request.headers.values("signature-input").collect();
    assert_eq!(
        std::str::from_utf8(input_line[0]).unwrap(),
        "a2a=(\"@method\" \"@target-uri\" \"content-type\" \"content-digest\" \"a2a-version\");\
         created=1767225600;expires=1767225660;nonce=\"AAECAwQFBgcICQoLDA0ODw\";keyid=\"peer-1\";\
         alg=\"ed25519\";tag=\"agent-intercom-a2a@1\""
    );
    let v = verify_request(
        &Profile::a2a_request(),
        &request,
        BODY,
        NOW * 1000,
        lookup(&k),
    )
    .unwrap();
    assert_eq!(v.keyid, "peer-1");
    assert_eq!(v.nonce.as_deref(), Some(NONCE));
    assert_eq!(v.replay_until_ms, (NOW + 30) * 1000 + 1);
    assert!(
        v.base
            .starts_with("\"@method\": POST\n\"@target-uri\": https://agent.example:8443/a2a\n")
    );
}

#[test]
fn each_refusal_has_its_code() {
    let k = key(1);
    let profile = Profile::a2a_request();
    let good = signed(&a2a_request(), &k);
    let code = |r: &Request, body: &[u8], now_s: i64| {
        verify_request(&profile, r, body, now_s * 1000, lookup(&k))
            .unwrap_err()
            .code()
    };
    let mut unsigned = a2a_request();
    unsigned.headers.push(
        "Content-Digest",
        content_digest(DigestAlgorithm::Sha256, BODY),
    );
    assert_eq!(code(&unsigned, BODY, NOW), ErrorCode::SignatureMissing);
    assert_eq!(code(&good, b"{}", NOW), ErrorCode::ContentDigestMismatch);
    assert_eq!(code(&good, BODY, NOW + 31), ErrorCode::SignatureExpired);
    assert_eq!(code(&good, BODY, NOW - 31), ErrorCode::SignatureNotYetValid);
    let other = key(2);
    let e = verify_request(&profile, &good, BODY, NOW * 1000, lookup(&other)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::SignatureInvalid);
    let e = verify_request(&profile, &good, BODY, NOW * 1000, |_| None).unwrap_err();
    assert_eq!(e.code(), ErrorCode::UnknownSigningKey);
    // A header the signature covers, changed; an A2A header added after signing.
    let mut changed = good.clone();
    changed.headers.remove("a2a-version");
    changed.headers.push("A2A-Version", "0.3");
    assert_eq!(code(&changed, BODY, NOW), ErrorCode::SignatureInvalid);
    let mut added = good.clone();
    added.headers.push("A2A-Extensions", EXTENSION_URI);
    assert_eq!(code(&added, BODY, NOW), ErrorCode::SignatureMalformed);
    let mut stripped = good.clone();
    stripped.headers.remove("a2a-version");
    assert_eq!(code(&stripped, BODY, NOW), ErrorCode::SignatureInvalid);
}

#[test]
fn responses_bind_to_their_request() {
    let k = key(3);
    let requester = key(1);
    let request = signed(&a2a_request(), &requester);
    let response = Response::new(200)
        .unwrap()
        .with_header("Content-Type", "application/json");
    let profile = Profile::a2a_response();
    let mut out = response.clone();
    let sig = sign_response(&profile, &response, &request, BODY, &input(&k)).unwrap();
    sig.apply(&mut out.headers);
    assert!(sig.base.contains("\"signature\";req;key=\"a2a\": :"));
    let v = verify_response(&profile, &out, &request, BODY, NOW * 1000, lookup(&k)).unwrap();
    assert_eq!(v.params.tag(), Some(RESPONSE_TAG));
    // The same response presented for another request (another nonce, another signature).
    let mut again = a2a_request();
    let other = SignInput {
        nonce: "ZmVkY2JhOTg3NjU0MzIxMA",
        ..input(&requester)
    };
    sign_request(&Profile::a2a_request(), &a2a_request(), BODY, &other)
        .unwrap()
        .apply(&mut again.headers);
    let e = verify_response(&profile, &out, &again, BODY, NOW * 1000, lookup(&k)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::SignatureInvalid);
    // A request signature is no response signature (another tag, other components).
    let e = verify_request(
        &Profile::a2a_request(),
        &request_from(&out),
        BODY,
        NOW * 1000,
        lookup(&k),
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::SignatureMalformed);
}

/// A request carrying a response's headers.
fn request_from(response: &Response) -> Request {
    let mut r = a2a_request();
    r.headers = response.headers.clone();
    r
}

/// xorshift64*: deterministic noise without a dependency.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn bytes(&mut self, template: &[u8]) -> Vec<u8> {
        let mut out = template.to_vec();
        let edits = 1 + self.next() % 4;
        for _ in 0..edits {
            let at = (self.next() as usize) % (out.len() + 1);
            let b = match self.next() % 4 {
                0 => b"\"();=:, *?\\\x00\xff\n"[(self.next() % 14) as usize],
                _ => (self.next() % 256) as u8,
            };
            match self.next() % 3 {
                0 if at < out.len() => out[at] = b,
                1 if at < out.len() => {
                    out.remove(at);
                }
                _ => out.insert(at, b),
            }
        }
        out
    }
}

#[test]
fn arbitrary_bytes_never_panic_and_always_have_a_code() {
    let k = key(1);
    let profile = Profile::a2a_request();
    let good = signed(&a2a_request(), &k);
    let allowed = [
        ErrorCode::SignatureMissing,
        ErrorCode::SignatureMalformed,
        ErrorCode::ContentDigestMismatch,
        ErrorCode::UnknownSigningKey,
        ErrorCode::SignatureInvalid,
        ErrorCode::SignatureExpired,
        ErrorCode::SignatureNotYetValid,
    ];
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    let mut accepted = 0;
    for round in 0..2000 {
        let field = [
            "signature-input",
            "signature",
            "content-digest",
            "content-type",
        ][round % 4];
        let original: Vec<u8> = good.headers.values(field).next().unwrap().to_vec();
        let mut r = good.clone();
        r.headers.remove(field);
        r.headers.push(field, noise.bytes(&original));
        match verify_request(&profile, &r, BODY, NOW * 1000, lookup(&k)) {
            Ok(_) => accepted += 1,
            Err(e) => assert!(allowed.contains(&e.code()), "{field}: {e}"),
        }
    }
    // Only edits that change nothing the signature covers (spacing, a dropped space) pass.
    assert!(accepted < 200, "{accepted}");
}

#[test]
fn hostile_shapes_are_refused_with_codes() {
    let k = key(1);
    let profile = Profile::a2a_request();
    let good = signed(&a2a_request(), &k);
    let input_value = String::from_utf8(
        good.headers
            .values("signature-input")
            .next()
            .unwrap()
            .to_vec(),
    )
    .unwrap();
    let sig_value =
        String::from_utf8(good.headers.values("signature").next().unwrap().to_vec()).unwrap();
    let with = |input: &str, signature: &str| {
        let mut r = good.clone();
        r.headers.remove("signature-input");
        r.headers.remove("signature");
        r.headers.push("Signature-Input", input);
        r.headers.push("Signature", signature);
        verify_request(&profile, &r, BODY, NOW * 1000, lookup(&k))
            .unwrap_err()
            .code()
    };
    let m = ErrorCode::SignatureMalformed;
    let huge = format!("{input_value};x{}", "a".repeat(MAX_SIGNATURE_FIELD_BYTES));
    assert_eq!(with(&huge, &sig_value), m);
    assert_eq!(
        with(&format!("{input_value}, {input_value}"), &sig_value),
        m
    );
    assert_eq!(with(&input_value, &format!("{sig_value}, {sig_value}")), m);
    assert_eq!(with(&input_value, &format!("{sig_value}, b=:AAAA:")), m);
    assert_eq!(
        with(
            &input_value.replacen("a2a=", "b=", 1),
            &sig_value.replacen("a2a=", "b=", 1)
        ),
        m
    );
    use base64::Engine as _;
    let b64 = |n: usize| base64::engine::general_purpose::STANDARD.encode(vec![7u8; n]);
    assert_eq!(with(&input_value, &format!("a2a=:{}:", b64(63))), m);
    assert_eq!(with(&input_value, &format!("a2a=:{}:", b64(65))), m);
    assert_eq!(
        with(&input_value, &format!("a2a=:{}:", b64(64))),
        ErrorCode::SignatureInvalid
    );
    assert_eq!(
        with(
            &input_value.replace("ed25519", "rsa-pss-sha512"),
            &sig_value
        ),
        m
    );
    assert_eq!(with(&input_value.replace("a2a@1", "a2a@2"), &sig_value), m);
    assert_eq!(
        with(
            &input_value.replace(";nonce=\"AAECAwQFBgcICQoLDA0ODw\"", ""),
            &sig_value
        ),
        m
    );
    assert_eq!(
        with(&input_value.replace("\"content-digest\" ", ""), &sig_value),
        m
    );
    assert_eq!(with(&format!("{input_value};foo=1"), &sig_value), m);
    assert_eq!(with(&format!("{input_value};created=1"), &sig_value), m);
    assert_eq!(
        with(
            &input_value.replace("expires=1767225660", "expires=1767225901"),
            &sig_value
        ),
        m
    );
    assert_eq!(
        with(
            &input_value.replace("\"content-type\"", "\"content-type\" \"content-type\""),
            &sig_value
        ),
        m
    );
    let mut raw = good.clone();
    raw.headers.remove("signature-input");
    raw.headers.push(
        "Signature-Input",
        input_value.replace("peer-1", "peer-\u{e9}").into_bytes(),
    );
    let e = verify_request(&profile, &raw, BODY, NOW * 1000, lookup(&k)).unwrap_err();
    assert_eq!(e.code(), m);
    let mut latin1 = good.clone();
    latin1.headers.remove("content-type");
    latin1
        .headers
        .push("Content-Type", b"application/json; x=\xe9".to_vec());
    let e = verify_request(&profile, &latin1, BODY, NOW * 1000, lookup(&k)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::SignatureInvalid);
    let mut only_input = good.clone();
    only_input.headers.remove("signature");
    let e = verify_request(&profile, &only_input, BODY, NOW * 1000, lookup(&k)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::SignatureMissing);
}

#[test]
fn signing_refuses_what_verifying_would() {
    let k = key(1);
    let profile = Profile::a2a_request();
    let r = a2a_request();
    let try_sign = |i: SignInput<'_>| sign_request(&profile, &r, BODY, &i).unwrap_err().code();
    let bad = ErrorCode::InvalidArgument;
    assert_eq!(
        try_sign(SignInput {
            expires: NOW,
            ..input(&k)
        }),
        bad
    );
    assert_eq!(
        try_sign(SignInput {
            expires: NOW + 301,
            ..input(&k)
        }),
        bad
    );
    assert_eq!(
        try_sign(SignInput {
            nonce: "short",
            ..input(&k)
        }),
        bad
    );
    assert_eq!(
        try_sign(SignInput {
            keyid: "",
            ..input(&k)
        }),
        bad
    );
    assert_eq!(
        try_sign(SignInput {
            keyid: "caf\u{e9}",
            ..input(&k)
        }),
        bad
    );
    let signed_once = signed(&r, &k);
    let e = sign_request(&profile, &signed_once, BODY, &input(&k)).unwrap_err();
    assert_eq!(e.code(), bad);
    let no_type = Request::new("POST", "https://h/a2a").unwrap();
    let e = sign_request(&profile, &no_type, BODY, &input(&k)).unwrap_err();
    assert_eq!(e.code(), bad);
}
