use super::*;

const NOW: i64 = 1_777_636_800_000; // 2026-05-01T12:00:00.000Z

fn fields() -> Fields {
    Fields {
        sent_at_ms: NOW - 1_000,
        sender: Sender {
            agent_id: "agent-a".into(),
            agent_type: "coding-agent".into(),
            daemon_fingerprint: "sha256:00".into(),
            capabilities: vec!["tasks".into(), "messages".into()],
        },
        recipient: Some("agent-b".into()),
        content_type: ContentType::A2aMessage,
        payload: canonical::parse(r#"{"content":"hello","n":[1,2,{"x":null}]}"#)
            .map(|v| v.owned())
            .unwrap(),
        metadata: vec![("trace".into(), Value::String("t-1".into()))],
        nonce: "nonce-0123456789abcdef".into(),
        expires_at_ms: NOW + 600_000,
    }
}

fn keyring() -> (MemoryKeyring, Signer, Signer) {
    let ed = Signer::ed25519("ed-1", &[7u8; 32]);
    let mac = Signer::hmac_sha256("mac-1", &[9u8; 32]).unwrap();
    let mut ring = MemoryKeyring::new();
    ring.add_ed25519("ed-1", ed.public_key().unwrap());
    ring.add_hmac("mac-1", &[9u8; 32]).unwrap();
    (ring, ed, mac)
}

fn code(input: &str, ring: &MemoryKeyring) -> ErrorCode {
    verify(input.as_bytes(), ring, NOW, DEFAULT_SKEW_MS)
        .unwrap_err()
        .code()
}

#[test]
fn signs_and_verifies_both_kinds() {
    let (ring, ed, mac) = keyring();
    for signer in [&ed, &mac] {
        let text = sign(&fields(), signer).unwrap();
        let verified = verify(text.as_bytes(), &ring, NOW, DEFAULT_SKEW_MS).unwrap();
        assert_eq!(verified.fields, fields());
        assert_eq!(verified.kind, signer.kind());
        assert_eq!(verified.key_id, signer.key_id());
        assert_eq!(verified.canonical, text);
        // Whitespace and member order are not part of what is signed.
        let spaced = text.replacen('{', "{ ", 1).replace(",\"", ",\n \"");
        verify(spaced.as_bytes(), &ring, NOW, DEFAULT_SKEW_MS).unwrap();
        // The signing input is the frame of the envelope without signature.value.
        let input = String::from_utf8(signing_input(text.as_bytes()).unwrap()).unwrap();
        assert!(input.starts_with(&format!(
            "agent-intercom-canonical-frame-v1:{}:{SIGNING_DOMAIN}:",
            SIGNING_DOMAIN.len()
        )));
        assert!(input.contains(&format!(
            "\"signature\":{{\"key_id\":\"{}\",\"kind\":\"{}\"}}",
            signer.key_id(),
            signer.kind().as_str()
        )));
        assert!(!input.contains("\"value\""));
    }
}

#[test]
fn timestamps_round_trip() {
    for text in [
        "1970-01-01T00:00:00.000Z",
        "2026-05-01T12:00:00.000Z",
        "2024-02-29T23:59:59.999Z",
        "0000-01-01T00:00:00.000Z",
        "9999-12-31T23:59:59.999Z",
        "1969-12-31T23:59:59.999Z",
    ] {
        let ms = parse_timestamp(text).unwrap();
        assert_eq!(format_timestamp(ms), text);
    }
    assert_eq!(parse_timestamp("2026-05-01T12:00:00.000Z"), Some(NOW));
    for bad in [
        "2026-05-01T12:00:00Z",
        "2026-05-01T12:00:00.000+00:00",
        "2026-02-29T00:00:00.000Z",
        "2026-05-01 12:00:00.000Z",
    ] {
        assert_eq!(parse_timestamp(bad), None, "{bad}");
    }
}

#[test]
fn hmac_keys_are_hkdf_of_the_secret_and_id() {
    // Known answer, computed independently (RFC 5869 with Python's hmac module).
    let key = keys::hmac_key(&[9u8; 32], "mac-1");
    let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, HMAC_KEY_MAC_1);
    assert_ne!(keys::hmac_key(&[9u8; 32], "mac-2"), key);
    assert!(Signer::hmac_sha256("k", &[1u8; 31]).is_err());
}

const HMAC_KEY_MAC_1: &str = "e58f4d35a9ca17054000b4bef9fe832c474bf8be05df7959eca61fd8832b8bfb";

#[test]
fn each_refusal_has_its_code() {
    let (ring, ed, _) = keyring();
    let good = sign(&fields(), &ed).unwrap();
    let with = |from: &str, to: &str| {
        assert!(good.contains(from), "{from}");
        good.replacen(from, to, 1)
    };
    assert_eq!(
        code(&format!("{good}{}", " ".repeat(MAX_ENVELOPE_BYTES)), &ring),
        ErrorCode::EnvelopeTooLarge
    );
    let at_limit = format!("{good}{}", " ".repeat(MAX_ENVELOPE_BYTES - good.len()));
    verify(at_limit.as_bytes(), &ring, NOW, DEFAULT_SKEW_MS).unwrap();
    let not_utf8 = [good.as_bytes(), b"\xff"].concat();
    assert_eq!(
        verify(&not_utf8, &ring, NOW, DEFAULT_SKEW_MS)
            .unwrap_err()
            .code(),
        ErrorCode::EnvelopeMalformed
    );
    let cases = [
        (
            with("\"format_version\":1", "\"format_version\":2"),
            ErrorCode::UnsupportedFormatVersion,
        ),
        (
            with("\"format_version\":1", "\"format_version\":\"1\""),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            with("\"nonce\":", "\"extra\":1,\"nonce\":"),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            with("\"agent_id\":", "\"agent_idx\":\"a\",\"agent_id\":"),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            with("\"kind\":", "\"alg\":\"x\",\"kind\":"),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            with("\"n\":[1,", "\"n\":[1.5,"),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            with("\"x\":null", "\"x\":null,\"x\":1"),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            with(".000Z\",\"format", "Z\",\"format"),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            with("\"a2a_message\"", "\"a2a_other\""),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            with("[\"tasks\",\"messages\"]", "[\"tasks\",\"tasks\"]"),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            with("\"nonce-0123456789abcdef\"", "\"short\""),
            ErrorCode::EnvelopeMalformed,
        ),
        (with("\"agent-b\"", "\"\""), ErrorCode::EnvelopeMalformed),
        (
            with("\"agent-b\"", "\"a\\u0000b\""),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            with("\"kind\":\"ed25519\"", "\"kind\":\"rsa\""),
            ErrorCode::SignatureMalformed,
        ),
        (
            with("\"key_id\":\"ed-1\"", "\"key_id\":\"\""),
            ErrorCode::SignatureMalformed,
        ),
        (
            with("\"key_id\":\"ed-1\"", "\"key_id\":\"nobody\""),
            ErrorCode::UnknownSigningKey,
        ),
        (with("\"hello\"", "\"hellO\""), ErrorCode::SignatureInvalid),
        (
            with("\"trace\":\"t-1\"", "\"trace\":\"t-2\""),
            ErrorCode::SignatureInvalid,
        ),
    ];
    for (input, want) in &cases {
        assert_eq!(code(input, &ring), *want, "{input}");
    }
    let value_at = good.find("\"value\":\"").unwrap() + 9;
    let value_end = value_at + good[value_at..].find('"').unwrap();
    let value = &good[value_at..value_end];
    for (replacement, want) in [
        ("", ErrorCode::SignatureMissing),
        ("AAAA", ErrorCode::SignatureMalformed),
        (&value[1..], ErrorCode::SignatureMalformed),
    ] {
        let input = format!("{}{replacement}{}", &good[..value_at], &good[value_end..]);
        assert_eq!(code(&input, &ring), want, "{replacement}");
    }
    let signature_at = good.find(",\"signature\":").unwrap();
    let unsigned = format!("{}}}", &good[..signature_at]);
    assert_eq!(code(&unsigned, &ring), ErrorCode::SignatureMissing);
    let null = format!("{},\"signature\":null}}", &good[..signature_at]);
    assert_eq!(code(&null, &ring), ErrorCode::SignatureMissing);
    let empty = format!("{},\"signature\":{{}}}}", &good[..signature_at]);
    assert_eq!(code(&empty, &ring), ErrorCode::SignatureMissing);
    // Freshness, at its edges.
    let text = good.as_bytes();
    let expires = fields().expires_at_ms;
    verify(text, &ring, expires - 1, 0).unwrap();
    let late = verify(text, &ring, expires, 0).unwrap_err();
    assert_eq!(late.code(), ErrorCode::SignatureExpired);
    let sent = fields().sent_at_ms;
    verify(text, &ring, sent - 5, 5).unwrap();
    let early = verify(text, &ring, sent - 6, 5).unwrap_err();
    assert_eq!(early.code(), ErrorCode::SignatureNotYetValid);
    let skew = verify(text, &ring, NOW, MAX_SKEW_MS + 1).unwrap_err();
    assert_eq!(skew.code(), ErrorCode::InvalidArgument);
}

#[test]
fn signing_refuses_what_verification_would() {
    let (_, ed, _) = keyring();
    let mut f = fields();
    f.expires_at_ms = f.sent_at_ms;
    assert_eq!(
        sign(&f, &ed).unwrap_err().code(),
        ErrorCode::EnvelopeMalformed
    );
    let mut f = fields();
    f.expires_at_ms = f.sent_at_ms + MAX_LIFETIME_MS + 1;
    assert_eq!(
        sign(&f, &ed).unwrap_err().code(),
        ErrorCode::EnvelopeMalformed
    );
    let mut f = fields();
    f.sender.capabilities = vec!["x".into(); 2];
    assert_eq!(
        sign(&f, &ed).unwrap_err().code(),
        ErrorCode::EnvelopeMalformed
    );
    let spaced = Signer::ed25519("has space", &[1u8; 32]);
    assert_eq!(
        sign(&fields(), &spaced).unwrap_err().code(),
        ErrorCode::InvalidArgument
    );
    let text = fields::canonical_text(&fields());
    let signed = sign_text(&text, &ed).unwrap();
    assert_eq!(signed, sign(&fields(), &ed).unwrap());
    let twice = sign_text(&signed, &ed).unwrap_err();
    assert_eq!(twice.code(), ErrorCode::EnvelopeMalformed);
}

#[test]
fn replays_are_refused_in_memory() {
    let (ring, ed, mac) = keyring();
    let mut seen = NonceSet::new();
    let first = verify(sign(&fields(), &ed).unwrap().as_bytes(), &ring, NOW, 0).unwrap();
    seen.remember(&first).unwrap();
    assert_eq!(
        seen.remember(&first).unwrap_err().code(),
        ErrorCode::Replayed
    );
    // The same nonce under another key is another namespace.
    let other = verify(sign(&fields(), &mac).unwrap().as_bytes(), &ring, NOW, 0).unwrap();
    seen.remember(&other).unwrap();
}

#[test]
fn key_encodings_round_trip() {
    let seed = [3u8; 32];
    let signer = Signer::ed25519("k", &seed);
    let public = signer.public_key().unwrap();
    let pem = keys::public_key_pem(&public);
    assert_eq!(keys::public_key_of(pem.as_bytes()).unwrap(), public);
    assert_eq!(
        keys::public_key_of(&keys::public_key_der(&public)).unwrap(),
        public
    );
    let private = keys::private_key_pem(&seed);
    assert_eq!(keys::private_key_seed(private.as_bytes()).unwrap(), seed);
    let refused = keys::public_key_of(private.as_bytes()).unwrap_err();
    assert!(refused.message().contains("private key"), "{refused}");
    assert!(
        keys::public_key_of(b"-----BEGIN PUBLIC KEY-----\n!!\n-----END PUBLIC KEY-----").is_err()
    );
    // The identity point is a weak key.
    let mut weak = [0u8; 32];
    weak[0] = 1;
    assert!(keys::public_key_of(&keys::public_key_der(&weak)).is_err());
    assert!(keys::fingerprint(&public).starts_with("sha256:"));
    assert_eq!(keys::fingerprint(&public).len(), 7 + 64);
}
