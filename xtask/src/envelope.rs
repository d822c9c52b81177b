//! `vectors/transport-envelope-v1.json`: the transport-envelope cases every runner (Rust, C,
//! Node) verifies, generated from the core's own signer with test keys derived from fixed labels
//! (Ed25519 and HMAC are deterministic, so the file is the same on every run).
//!
//! A case presents `envelopes` in order to one fresh nonce set (`envelope.verifySequence`) with
//! the file's `keyring`, at `now_ms` (the case's, else the file's) and `skew_ms`, and expects
//! `expected[i]` for the i-th: `OK` or a stable error code. `pad_to_bytes` pads each envelope
//! with trailing spaces to that many bytes first (the size cases, which would otherwise hold
//! 2 MiB of text). `sign` asks that `envelope.sign(sign.fields, signers[sign.signer])` print
//! `envelopes[0]` exactly; `signing_input_sha256` is the SHA-256 of `envelope.signingInput`.

use agent_intercom_core::canonical::{self, Value};
use agent_intercom_core::envelope::{
    self, ContentType, DEFAULT_SKEW_MS, Fields, MAX_CAPABILITIES, MAX_ENVELOPE_BYTES, Sender,
    Signer, keys,
};
use agent_intercom_vendored::sha256_hex;

/// 2026-05-01T12:00:00.000Z.
const NOW: i64 = 1_777_636_800_000;

fn seed(label: &str) -> [u8; 32] {
    let hex =
        sha256_hex(format!("agent-intercom transport-envelope-v1 test key {label}").as_bytes());
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex");
    }
    out
}

fn s(text: &str) -> Value<'static> {
    Value::String(text.to_string().into())
}

fn obj(members: Vec<(&str, Value<'static>)>) -> Value<'static> {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_string().into(), v))
            .collect(),
    )
}

fn parse(text: &str) -> Value<'static> {
    canonical::parse(text).expect("canonical text").owned()
}

fn json(v: &Value<'_>) -> String {
    canonical::canonical_json(v).expect("canonical")
}

/// The member at `path` (object keys, or array indexes as decimal), for changing in place.
fn at<'v>(v: &'v mut Value<'static>, path: &[&str]) -> &'v mut Value<'static> {
    path.iter().fold(v, |v, key| match v {
        Value::Object(m) => &mut m.iter_mut().find(|(k, _)| k == key).expect(key).1,
        Value::Array(items) => &mut items[key.parse::<usize>().expect("index")],
        _ => panic!("no {key}"),
    })
}

type Members = Vec<(std::borrow::Cow<'static, str>, Value<'static>)>;

fn members<'v>(v: &'v mut Value<'static>) -> &'v mut Members {
    match v {
        Value::Object(m) => m,
        _ => panic!("an object"),
    }
}

fn edit(text: &str, change: impl FnOnce(&mut Value<'static>)) -> String {
    let mut tree = parse(text);
    change(&mut tree);
    json(&tree)
}

fn set(text: &str, path: &[&str], value: Value<'static>) -> String {
    edit(text, |t| *at(t, path) = value)
}

fn remove(text: &str, path: &[&str], key: &str) -> String {
    edit(text, |t| members(at(t, path)).retain(|(k, _)| k != key))
}

fn add(text: &str, path: &[&str], key: &str, value: Value<'static>) -> String {
    edit(text, |t| {
        members(at(t, path)).push((key.to_string().into(), value))
    })
}

/// Pretty, with the members in reverse order: the same envelope to a verifier.
fn reformat(text: &str) -> String {
    fn rev(v: &Value<'static>) -> Value<'static> {
        match v {
            Value::Object(m) => {
                Value::Object(m.iter().rev().map(|(k, v)| (k.clone(), rev(v))).collect())
            }
            other => other.clone(),
        }
    }
    let mut out = String::new();
    pretty(&rev(&parse(text)), 0, &mut out);
    out
}

struct Kind {
    name: &'static str,
    /// The enrolled signer, its wrong-key twin (same id), an alias id of the same key, an id
    /// no one enrolled.
    signer: Signer,
    wrong: Signer,
    alias: &'static str,
    unknown: Signer,
}

fn kinds() -> [Kind; 2] {
    let mac = |id: &str, label: &str| Signer::hmac_sha256(id, &seed(label)).expect("a secret");
    [
        Kind {
            name: "ed25519",
            signer: Signer::ed25519("ed-1", &seed("ed-1")),
            wrong: Signer::ed25519("ed-1", &seed("ed-2")),
            alias: "ed-1-alias",
            unknown: Signer::ed25519("ed-9", &seed("ed-9")),
        },
        Kind {
            name: "hmac-sha256",
            signer: mac("mac-1", "mac-1"),
            wrong: mac("mac-1", "mac-2"),
            alias: "mac-1-alias",
            unknown: mac("mac-9", "mac-9"),
        },
    ]
}

fn fields(nonce: &str) -> Fields {
    let sent_at_ms = NOW - 1_000;
    Fields {
        sent_at_ms,
        sender: Sender {
            agent_id: "agent-alpha".into(),
            agent_type: "coding-agent".into(),
            daemon_fingerprint:
                "sha256:5d1f0c5e8e4d4b0f9d6a3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a29".into(),
            capabilities: vec!["a2a_message".into(), "a2a_task".into(), "handoff".into()],
        },
        recipient: Some("agent-beta".into()),
        content_type: ContentType::A2aMessage,
        payload: parse(
            r#"{"content":"Please review the parser change.","privacy":"private",
            "priority":"high","metadata":{"files":["core/src/lib.rs"],"lines":[12,40]}}"#,
        ),
        metadata: vec![
            ("trace_id".into(), s("trace-0001")),
            ("hops".into(), Value::Int(1)),
        ],
        nonce: nonce.to_string(),
        expires_at_ms: sent_at_ms + 600_000,
    }
}

fn sign(f: &Fields, signer: &Signer) -> String {
    envelope::sign(f, signer).expect("signs")
}

#[derive(Default)]
struct Case {
    id: String,
    description: String,
    envelopes: Vec<String>,
    expected: Vec<String>,
    now_ms: Option<i64>,
    pad_to_bytes: Option<usize>,
    sign: Option<(String, String)>,
    signing_input_sha256: Option<String>,
}

fn case(id: &str, description: &str, envelope: String, expected: &str) -> Case {
    Case {
        id: id.to_string(),
        description: description.to_string(),
        envelopes: vec![envelope],
        expected: vec![expected.to_string()],
        ..Case::default()
    }
}

const INVALID: &str = "SIGNATURE_INVALID";
const MALFORMED: &str = "ENVELOPE_MALFORMED";

fn kind_cases(k: &Kind, out: &mut Vec<Case>) {
    let name = k.name;
    let nonce = format!("nonce-{name}-valid-0001");
    let f = fields(&nonce);
    let good = sign(&f, &k.signer);
    let unsigned = remove(&good, &[], "signature");
    let mut valid = case(
        &format!("{name}/valid"),
        "a valid envelope",
        good.clone(),
        "OK",
    );
    valid.sign = Some((k.signer.key_id().to_string(), unsigned));
    let input = envelope::signing_input(good.as_bytes()).expect("input");
    valid.signing_input_sha256 = Some(sha256_hex(&input));
    out.push(valid);
    out.push(case(
        &format!("{name}/valid/reformatted"),
        "whitespace and member order are not signed: the canonical form is",
        reformat(&good),
        "OK",
    ));
    let mut to_all = fields(&format!("nonce-{name}-valid-0002"));
    to_all.recipient = None;
    to_all.content_type = ContentType::A2aTask;
    to_all.payload = parse(r#"{"title":"Run the benchmarks"}"#);
    to_all.sender.capabilities.clear();
    to_all.metadata.clear();
    out.push(case(
        &format!("{name}/valid/recipient-null"),
        "a task for anyone, no capabilities, empty metadata",
        sign(&to_all, &k.signer),
        "OK",
    ));
    for content_type in [ContentType::HandoffBundle, ContentType::ContextPackage] {
        let mut other = fields(&format!("nonce-{name}-{}", content_type.as_str()));
        other.content_type = content_type;
        out.push(case(
            &format!("{name}/valid/{}", content_type.as_str()),
            "another content type",
            sign(&other, &k.signer),
            "OK",
        ));
    }
    let tampered: Vec<(&str, String, &str)> = vec![
        (
            "sent_at",
            set(&good, &["sent_at"], s("2026-05-01T11:59:59.001Z")),
            INVALID,
        ),
        (
            "sender.agent_id",
            set(&good, &["sender", "agent_id"], s("agent-mallory")),
            INVALID,
        ),
        (
            "sender.agent_type",
            set(&good, &["sender", "agent_type"], s("admin")),
            INVALID,
        ),
        (
            "sender.daemon_fingerprint",
            set(&good, &["sender", "daemon_fingerprint"], s("sha256:00")),
            INVALID,
        ),
        (
            "sender.capabilities[0]",
            set(&good, &["sender", "capabilities", "0"], s("admin")),
            INVALID,
        ),
        (
            "sender.capabilities[1]",
            set(&good, &["sender", "capabilities", "1"], s("a2a_tasks")),
            INVALID,
        ),
        (
            "sender.capabilities[2]",
            set(&good, &["sender", "capabilities", "2"], s("handoff ")),
            INVALID,
        ),
        (
            "sender.capabilities/added",
            edit(&good, |t| {
                if let Value::Array(items) = at(t, &["sender", "capabilities"]) {
                    items.push(s("admin"));
                }
            }),
            INVALID,
        ),
        (
            "sender.capabilities/removed",
            edit(&good, |t| {
                if let Value::Array(items) = at(t, &["sender", "capabilities"]) {
                    items.pop();
                }
            }),
            INVALID,
        ),
        (
            "sender.capabilities/reordered",
            edit(&good, |t| {
                if let Value::Array(items) = at(t, &["sender", "capabilities"]) {
                    items.swap(0, 1);
                }
            }),
            INVALID,
        ),
        (
            "recipient",
            set(&good, &["recipient"], s("agent-gamma")),
            INVALID,
        ),
        (
            "recipient/null",
            set(&good, &["recipient"], Value::Null),
            INVALID,
        ),
        (
            "content_type",
            set(&good, &["content_type"], s("a2a_task")),
            INVALID,
        ),
        (
            "payload",
            set(
                &good,
                &["payload", "metadata", "lines", "1"],
                Value::Int(41),
            ),
            INVALID,
        ),
        (
            "payload/added",
            add(&good, &["payload"], "ttl_hours", Value::Int(1)),
            INVALID,
        ),
        (
            "payload/removed",
            remove(&good, &["payload"], "privacy"),
            INVALID,
        ),
        (
            "metadata",
            set(&good, &["metadata", "hops"], Value::Int(2)),
            INVALID,
        ),
        (
            "metadata/added",
            add(&good, &["metadata"], "route", s("x")),
            INVALID,
        ),
        (
            "metadata/removed",
            remove(&good, &["metadata"], "trace_id"),
            INVALID,
        ),
        (
            "nonce",
            set(&good, &["nonce"], s(&format!("{nonce}x"))),
            INVALID,
        ),
        (
            "expires_at",
            set(&good, &["expires_at"], s("2026-05-01T12:09:58.999Z")),
            INVALID,
        ),
        (
            "signature.key_id",
            set(&good, &["signature", "key_id"], s(k.alias)),
            INVALID,
        ),
        (
            "signature.kind",
            set(
                &good,
                &["signature", "kind"],
                s(if name == "ed25519" {
                    "hmac-sha256"
                } else {
                    "ed25519"
                }),
            ),
            "SIGNATURE_MALFORMED",
        ),
        ("signature.value", flip_bit(&good), INVALID),
        (
            "format_version",
            set(&good, &["format_version"], Value::Int(2)),
            "UNSUPPORTED_FORMAT_VERSION",
        ),
    ];
    for (member, text, expected) in tampered {
        out.push(case(
            &format!("{name}/tampered/{member}"),
            &format!("{member} changed after signing"),
            text,
            expected,
        ));
    }
    out.push(case(
        &format!("{name}/wrong-key"),
        "signed by another key under the enrolled key id",
        sign(&f, &k.wrong),
        INVALID,
    ));
    out.push(case(
        &format!("{name}/unknown-key"),
        "signed by a key id nobody enrolled",
        sign(&f, &k.unknown),
        "UNKNOWN_SIGNING_KEY",
    ));
    let other_kind = if name == "ed25519" { "mac-1" } else { "ed-1" };
    out.push(case(
        &format!("{name}/kind-mismatch"),
        "a key id enrolled for the other kind",
        sign(&f, &kind_twin(k, other_kind)),
        "UNKNOWN_SIGNING_KEY",
    ));
    let freshness = [
        ("expired", f.expires_at_ms, "SIGNATURE_EXPIRED"),
        ("expired/last-valid-ms", f.expires_at_ms - 1, "OK"),
        (
            "not-yet-valid",
            f.sent_at_ms - DEFAULT_SKEW_MS - 1,
            "SIGNATURE_NOT_YET_VALID",
        ),
        (
            "not-yet-valid/within-skew",
            f.sent_at_ms - DEFAULT_SKEW_MS,
            "OK",
        ),
    ];
    for (what, now, expected) in freshness {
        let mut c = case(
            &format!("{name}/{what}"),
            "the valid envelope, verified at now_ms",
            good.clone(),
            expected,
        );
        c.now_ms = Some(now);
        out.push(c);
    }
    let mut changed = f.clone();
    changed.payload = parse(r#"{"content":"another text"}"#);
    let replays = [
        (
            "replayed",
            "the same envelope twice",
            vec![good.clone(), good.clone()],
        ),
        (
            "replayed/reformatted",
            "the same envelope, reformatted",
            vec![good.clone(), reformat(&good)],
        ),
        (
            "replayed/resigned",
            "the nonce reused by its key for other content",
            vec![good.clone(), sign(&changed, &k.signer)],
        ),
    ];
    for (what, description, envelopes) in replays {
        out.push(Case {
            id: format!("{name}/{what}"),
            description: description.to_string(),
            envelopes,
            expected: vec!["OK".into(), "REPLAYED".into()],
            ..Case::default()
        });
    }
    out.push(Case {
        id: format!("{name}/replay/after-a-refusal"),
        description: "a refused envelope does not take its nonce".into(),
        envelopes: vec![
            set(&good, &["recipient"], s("agent-gamma")),
            good.clone(),
            good.clone(),
        ],
        expected: vec![INVALID.into(), "OK".into(), "REPLAYED".into()],
        ..Case::default()
    });
}

fn kind_twin(k: &Kind, id: &str) -> Signer {
    match k.name {
        "ed25519" => Signer::ed25519(id, &seed("ed-1")),
        _ => Signer::hmac_sha256(id, &seed("mac-1")).expect("a secret"),
    }
}

fn flip_bit(text: &str) -> String {
    let tree = parse(text);
    let value = match tree.get("signature").and_then(|s| s.get("value")) {
        Some(Value::String(v)) => v.to_string(),
        _ => panic!("a signature"),
    };
    let mut bytes = keys::base64_decode(&value).expect("base64");
    bytes[10] ^= 0x01;
    set(text, &["signature", "value"], s(&keys::base64(&bytes)))
}

fn shared_cases(out: &mut Vec<Case>) {
    let ed = &kinds()[0].signer;
    let good = sign(&fields("nonce-shared-valid-0001"), ed);
    let mut other = fields("nonce-shared-valid-0001");
    other.payload = parse(r#"{"content":"same nonce, other key"}"#);
    let mac = Signer::hmac_sha256("mac-1", &seed("mac-1")).expect("a secret");
    out.push(Case {
        id: "replay/same-nonce-other-key".into(),
        description: "a nonce is remembered per key id".into(),
        envelopes: vec![good.clone(), sign(&other, &mac)],
        expected: vec!["OK".into(), "OK".into()],
        ..Case::default()
    });
    let padded = |id: &str, description: &str, text: String, size: usize, expected: &str| Case {
        pad_to_bytes: Some(size),
        ..case(id, description, text, expected)
    };
    out.push(padded(
        "size/at-limit",
        "exactly 2 MiB",
        good.clone(),
        MAX_ENVELOPE_BYTES,
        "OK",
    ));
    out.push(padded(
        "size/too-large",
        "one byte over 2 MiB",
        good.clone(),
        MAX_ENVELOPE_BYTES + 1,
        "ENVELOPE_TOO_LARGE",
    ));
    out.push(padded(
        "size/too-large/not-json",
        "refused for its size before it is parsed",
        "not json".into(),
        MAX_ENVELOPE_BYTES + 1,
        "ENVELOPE_TOO_LARGE",
    ));
    let version = |v: Value<'static>| set(&good, &["format_version"], v);
    for (id, text, expected) in [
        (
            "version/0",
            version(Value::Int(0)),
            "UNSUPPORTED_FORMAT_VERSION",
        ),
        (
            "version/2",
            version(Value::Int(2)),
            "UNSUPPORTED_FORMAT_VERSION",
        ),
        ("version/string", version(s("1")), MALFORMED),
        (
            "version/fraction",
            good.replacen("\"format_version\":1", "\"format_version\":1.0", 1),
            MALFORMED,
        ),
        (
            "version/missing",
            remove(&good, &[], "format_version"),
            MALFORMED,
        ),
    ] {
        out.push(case(id, "format_version", text, expected));
    }
    for member in &envelope::MEMBERS[1..9] {
        out.push(case(
            &format!("malformed/missing/{member}"),
            "a required member left out",
            remove(&good, &[], member),
            MALFORMED,
        ));
    }
    let deep = format!("{}1{}", "[".repeat(130), "]".repeat(130));
    let many: Vec<Value<'static>> = (0..=MAX_CAPABILITIES)
        .map(|i| s(&format!("c{i}")))
        .collect();
    let malformed: Vec<(&str, String)> = vec![
        ("not-json", "{\"format_version\":1,".into()),
        ("array", "[1]".into()),
        ("string", "\"envelope\"".into()),
        ("unknown-member", add(&good, &[], "priority", s("high"))),
        (
            "unknown-member/sender",
            add(&good, &["sender"], "agent_name", s("x")),
        ),
        (
            "unknown-member/signature",
            add(&good, &["signature"], "alg", s("ed25519")),
        ),
        (
            "duplicate-key",
            good.replacen("\"hops\":1", "\"hops\":1,\"hops\":1", 1),
        ),
        (
            "fraction-in-payload",
            good.replacen("[12,40]", "[12.5,40]", 1),
        ),
        (
            "nesting-too-deep",
            set(&good, &["payload"], s("deep")).replacen("\"deep\"", &deep, 1),
        ),
        (
            "sent_at/no-milliseconds",
            set(&good, &["sent_at"], s("2026-05-01T11:59:59Z")),
        ),
        (
            "sent_at/offset",
            set(&good, &["sent_at"], s("2026-05-01T11:59:59.000+00:00")),
        ),
        (
            "sent_at/not-a-date",
            set(&good, &["sent_at"], s("2026-02-30T11:59:59.000Z")),
        ),
        ("sent_at/number", set(&good, &["sent_at"], Value::Int(NOW))),
        (
            "expires_at/equal-to-sent_at",
            set(&good, &["expires_at"], s("2026-05-01T11:59:59.000Z")),
        ),
        (
            "expires_at/before-sent_at",
            set(&good, &["expires_at"], s("2026-05-01T11:59:58.999Z")),
        ),
        (
            "expires_at/lifetime-too-long",
            set(&good, &["expires_at"], s("2026-05-02T11:59:59.001Z")),
        ),
        (
            "sender/not-object",
            set(&good, &["sender"], s("agent-alpha")),
        ),
        (
            "sender.agent_id/empty",
            set(&good, &["sender", "agent_id"], s("")),
        ),
        (
            "sender.agent_id/control",
            set(&good, &["sender", "agent_id"], s("agent\nalpha")),
        ),
        (
            "sender.agent_id/too-long",
            set(&good, &["sender", "agent_id"], s(&"a".repeat(257))),
        ),
        (
            "sender.capabilities/not-array",
            set(&good, &["sender", "capabilities"], s("a2a_task")),
        ),
        (
            "sender.capabilities/not-string",
            set(&good, &["sender", "capabilities", "0"], Value::Int(1)),
        ),
        (
            "sender.capabilities/repeated",
            set(&good, &["sender", "capabilities", "1"], s("a2a_message")),
        ),
        (
            "sender.capabilities/too-many",
            set(&good, &["sender", "capabilities"], Value::Array(many)),
        ),
        ("recipient/empty", set(&good, &["recipient"], s(""))),
        (
            "content_type/unknown",
            set(&good, &["content_type"], s("a2a_artifact")),
        ),
        (
            "content_type/case",
            set(&good, &["content_type"], s("A2A_MESSAGE")),
        ),
        (
            "metadata/array",
            set(&good, &["metadata"], Value::Array(vec![])),
        ),
        ("metadata/null", set(&good, &["metadata"], Value::Null)),
        (
            "nonce/too-short",
            set(&good, &["nonce"], s("n-15-bytes-long")),
        ),
        (
            "nonce/space",
            set(&good, &["nonce"], s("nonce with spaces 01")),
        ),
    ];
    for (what, text) in malformed {
        out.push(case(
            &format!("malformed/{what}"),
            "not a TransportEnvelopeV1",
            text,
            MALFORMED,
        ));
    }
    let value = match parse(&good).get("signature").and_then(|s| s.get("value")) {
        Some(Value::String(v)) => v.to_string(),
        _ => panic!("a signature"),
    };
    let signature: Vec<(&str, String, &str)> = vec![
        (
            "missing",
            remove(&good, &[], "signature"),
            "SIGNATURE_MISSING",
        ),
        (
            "null",
            set(&good, &["signature"], Value::Null),
            "SIGNATURE_MISSING",
        ),
        (
            "empty-object",
            set(&good, &["signature"], obj(vec![])),
            "SIGNATURE_MISSING",
        ),
        (
            "value/empty",
            set(&good, &["signature", "value"], s("")),
            "SIGNATURE_MISSING",
        ),
        (
            "value/missing",
            remove(&good, &["signature"], "value"),
            "SIGNATURE_MISSING",
        ),
        (
            "not-object",
            set(&good, &["signature"], s(&value)),
            "SIGNATURE_MALFORMED",
        ),
        (
            "kind/unknown",
            set(&good, &["signature", "kind"], s("rsa-pss-sha512")),
            "SIGNATURE_MALFORMED",
        ),
        (
            "kind/missing",
            remove(&good, &["signature"], "kind"),
            "SIGNATURE_MALFORMED",
        ),
        (
            "key_id/empty",
            set(&good, &["signature", "key_id"], s("")),
            "SIGNATURE_MALFORMED",
        ),
        (
            "key_id/space",
            set(&good, &["signature", "key_id"], s("ed 1")),
            "SIGNATURE_MALFORMED",
        ),
        (
            "value/not-base64",
            set(&good, &["signature", "value"], s("not base64!")),
            "SIGNATURE_MALFORMED",
        ),
        (
            "value/unpadded",
            set(
                &good,
                &["signature", "value"],
                s(value.trim_end_matches('=')),
            ),
            "SIGNATURE_MALFORMED",
        ),
        (
            "value/short",
            set(&good, &["signature", "value"], s(&keys::base64(&[0u8; 32]))),
            "SIGNATURE_MALFORMED",
        ),
        (
            "value/number",
            set(&good, &["signature", "value"], Value::Int(1)),
            "SIGNATURE_MALFORMED",
        ),
    ];
    for (what, text, expected) in signature {
        out.push(case(
            &format!("signature/{what}"),
            "the signature member",
            text,
            expected,
        ));
    }
}

fn case_value(c: &Case) -> Value<'static> {
    let mut m = vec![
        ("id", s(&c.id)),
        ("description", s(&c.description)),
        (
            "envelopes",
            Value::Array(c.envelopes.iter().map(|e| s(e)).collect()),
        ),
        (
            "expected",
            Value::Array(c.expected.iter().map(|e| s(e)).collect()),
        ),
    ];
    if let Some(now) = c.now_ms {
        m.push(("now_ms", Value::Int(now)));
    }
    if let Some(size) = c.pad_to_bytes {
        m.push(("pad_to_bytes", Value::Int(size as i64)));
    }
    if let Some((signer, fields)) = &c.sign {
        m.push((
            "sign",
            obj(vec![("signer", s(signer)), ("fields", s(fields))]),
        ));
    }
    if let Some(hash) = &c.signing_input_sha256 {
        m.push(("signing_input_sha256", s(hash)));
    }
    obj(m)
}

/// The document.
pub fn document() -> String {
    let mut cases = Vec::new();
    for k in &kinds() {
        kind_cases(k, &mut cases);
    }
    shared_cases(&mut cases);
    let ed = |label: &str| {
        let signer = Signer::ed25519(label, &seed(label));
        keys::public_key_pem(&signer.public_key().expect("ed25519"))
    };
    let secret = |label: &str| s(&keys::base64(&seed(label)));
    let signers = obj(vec![
        (
            "ed-1",
            obj(vec![
                ("kind", s("ed25519")),
                ("key_id", s("ed-1")),
                ("private_key", s(&keys::private_key_pem(&seed("ed-1")))),
            ]),
        ),
        (
            "mac-1",
            obj(vec![
                ("kind", s("hmac-sha256")),
                ("key_id", s("mac-1")),
                ("secret", secret("mac-1")),
            ]),
        ),
    ]);
    let keyring = obj(vec![
        (
            "ed25519",
            obj(vec![
                ("ed-1", s(&ed("ed-1"))),
                ("ed-1-alias", s(&ed("ed-1"))),
            ]),
        ),
        (
            "hmac-sha256",
            obj(vec![
                ("mac-1", secret("mac-1")),
                ("mac-1-alias", secret("mac-1")),
            ]),
        ),
    ]);
    let doc = obj(vec![
        ("schema", s("agent-intercom/transport-envelope-vectors")),
        ("schema_version", Value::Int(1)),
        ("format_version", Value::Int(envelope::FORMAT_VERSION)),
        (
            "generator",
            s("cargo xtask gen (xtask/src/envelope.rs); test keys only"),
        ),
        ("now_ms", Value::Int(NOW)),
        ("now", s(&envelope::format_timestamp(NOW))),
        ("skew_ms", Value::Int(DEFAULT_SKEW_MS)),
        ("signers", signers),
        ("keyring", keyring),
        ("count", Value::Int(cases.len() as i64)),
        (
            "cases",
            Value::Array(cases.iter().map(case_value).collect()),
        ),
    ]);
    let mut out = String::new();
    pretty(&doc, 0, &mut out);
    out.push('\n');
    out
}

/// JSON with two-space indentation, members in their order (strings escaped canonically).
fn pretty(v: &Value<'_>, depth: usize, out: &mut String) {
    let pad = |d: usize| "  ".repeat(d);
    match v {
        Value::Array(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&pad(depth + 1));
                pretty(item, depth + 1, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(depth));
            out.push(']');
        }
        Value::Object(m) if !m.is_empty() => {
            out.push_str("{\n");
            for (i, (k, item)) in m.iter().enumerate() {
                out.push_str(&pad(depth + 1));
                out.push_str(&json(&Value::String(k.clone())));
                out.push_str(": ");
                pretty(item, depth + 1, out);
                out.push_str(if i + 1 < m.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(depth));
            out.push('}');
        }
        other => out.push_str(&json(other)),
    }
}
