//! `handoff::accept` over a real scratchpad store and a real keys directory: what lands, as
//! whose, and every refusal (with nothing stored and, for refusals before the replay check, the
//! nonce left untaken).

use std::path::PathBuf;
use std::sync::Arc;

use agent_intercom_a2a::handoff::{self, Item};
use agent_intercom_a2a::keys::KeyDir;
use agent_intercom_core::canonical::{self, Value};
use agent_intercom_core::envelope::{self, ContentType, Fields, Sender, SignatureKind};
use agent_intercom_core::{Error, ErrorCode};
use agent_intercom_scratchpad::{Clock, Config, Store};

const NOW: i64 = 1_777_636_800_000;

struct Fixed;
impl Clock for Fixed {
    fn now_ms(&self) -> i64 {
        NOW
    }
}

struct Setup {
    root: PathBuf,
    store: Store,
    keys: KeyDir,
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn setup(name: &str) -> Setup {
    let root = std::env::temp_dir().join(format!("aic-handoff-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let keys = KeyDir::create(&root.join("keys")).unwrap();
    keys.generate(SignatureKind::Ed25519, "ed-1").unwrap();
    keys.generate(SignatureKind::HmacSha256, "mac-1").unwrap();
    let store = Store::open(&root.join("pad.db"), Config::default(), Arc::new(Fixed)).unwrap();
    Setup { root, store, keys }
}

fn json(text: &str) -> Value<'static> {
    canonical::parse(text).unwrap().owned()
}

fn fields(content_type: ContentType, payload: &str, nonce: &str) -> Fields {
    Fields {
        sent_at_ms: NOW - 1_000,
        sender: Sender {
            agent_id: "remote-alpha".into(),
            agent_type: "coding-agent".into(),
            daemon_fingerprint: "sha256:ab".into(),
            capabilities: vec![],
        },
        recipient: Some("local-beta".into()),
        content_type,
        payload: json(payload),
        metadata: vec![],
        nonce: nonce.into(),
        expires_at_ms: NOW + 60_000,
    }
}

fn signed(s: &Setup, key: &str, f: &Fields) -> String {
    envelope::sign(f, &s.keys.signer(key).unwrap()).unwrap()
}

fn accept(s: &mut Setup, text: &str) -> Result<handoff::Landed, Error> {
    handoff::accept(&mut s.store, &s.keys, text.as_bytes(), NOW)
}

#[test]
fn a_message_lands_as_the_senders_once() {
    let mut s = setup("message");
    let payload = r#"{"content":"review please","category":"question","priority":"high",
        "privacy":"private","project_root":"/repo","ttl_hours":2,"metadata":{"pr":12}}"#;
    let text = signed(
        &s,
        "ed-1",
        &fields(ContentType::A2aMessage, payload, "nonce-message-0001"),
    );
    let landed = accept(&mut s, &text).unwrap();
    assert_eq!(landed.sender, "remote-alpha");
    assert_eq!(landed.key_id, "ed-1");
    let Item::Message {
        id,
        category,
        expires_at,
        ..
    } = &landed.item
    else {
        panic!("a message")
    };
    assert_eq!(category, "question");
    assert_eq!(*expires_at, NOW + 2 * 3_600_000);
    let seen = s.store.read_unread("local-beta", Some("/repo")).unwrap();
    assert_eq!(seen.len(), 1);
    let m = &seen[0];
    assert_eq!(
        (&m.id, m.from.as_str(), m.to.as_deref()),
        (id, "remote-alpha", Some("local-beta"))
    );
    assert_eq!(
        (m.privacy.as_str(), m.priority.as_str()),
        ("private", "high")
    );
    assert_eq!(m.content, "review please");
    assert_eq!(m.metadata.as_deref(), Some(r#"{"pr":12}"#));
    // Private: another agent of the project does not see it.
    assert!(
        s.store
            .read_unread("local-gamma", Some("/repo"))
            .unwrap()
            .is_empty()
    );
    assert_eq!(landed.to_json()["message"]["id"], id.as_str());
    // The same envelope again, even reformatted, is a replay, and lands nothing.
    let again = accept(&mut s, &text.replace(",\"", ", \"")).unwrap_err();
    assert_eq!(again.code(), ErrorCode::Replayed);
    assert!(
        s.store
            .read_unread("local-beta", Some("/repo"))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn tasks_and_bundles_land_with_their_shapes() {
    let mut s = setup("task");
    let task = fields(
        ContentType::A2aTask,
        r#"{"title":"run the suite","project_root":"/repo"}"#,
        "nonce-task-000001",
    );
    let landed = {
        let t = signed(&s, "mac-1", &task);
        accept(&mut s, &t)
    }
    .unwrap();
    let Item::Task { id, state, .. } = &landed.item else {
        panic!("a task")
    };
    assert_eq!(state, "submitted");
    let stored = s.store.task(id, "local-beta").unwrap();
    assert_eq!(stored.creator, "remote-alpha");
    assert_eq!(stored.assignee.as_deref(), Some("local-beta"));
    assert_eq!(stored.project_root.as_deref(), Some("/repo"));
    for (content_type, nonce) in [
        (ContentType::HandoffBundle, "nonce-bundle-00001"),
        (ContentType::ContextPackage, "nonce-context-0001"),
    ] {
        let mut f = fields(
            content_type,
            r#"{"content":"state of work","metadata":{"files":["a"]}}"#,
            nonce,
        );
        f.recipient = None;
        let landed = {
            let t = signed(&s, "ed-1", &f);
            accept(&mut s, &t)
        }
        .unwrap();
        let Item::Message { category, .. } = &landed.item else {
            panic!("a message")
        };
        assert_eq!(category, content_type.as_str());
    }
    let public = s.store.read_unread("anyone", None).unwrap();
    assert_eq!(public.len(), 2);
    assert!(
        public
            .iter()
            .all(|m| m.from == "remote-alpha" && m.to.is_none())
    );
}

#[test]
fn refusals_store_nothing() {
    let mut s = setup("refusals");
    let code = |s: &mut Setup, text: &str| accept(s, text).unwrap_err().code();
    let good = fields(
        ContentType::A2aMessage,
        r#"{"content":"x"}"#,
        "nonce-refusal-0001",
    );
    let text = signed(&s, "ed-1", &good);
    assert_eq!(
        code(&mut s, &text.replace("remote-alpha", "remote-mallory")),
        ErrorCode::SignatureInvalid
    );
    assert_eq!(
        code(&mut s, &text.replace("\"signature\"", "\"signaturx\"")),
        ErrorCode::EnvelopeMalformed
    );
    let unsigned = &text[..text.find(",\"signature\"").unwrap()];
    assert_eq!(
        code(&mut s, &format!("{unsigned}}}")),
        ErrorCode::SignatureMissing
    );
    let big = format!("{text}{}", " ".repeat(envelope::MAX_ENVELOPE_BYTES));
    assert_eq!(code(&mut s, &big), ErrorCode::EnvelopeTooLarge);
    let mut late = good.clone();
    late.expires_at_ms = NOW;
    assert_eq!(
        {
            let t = signed(&s, "ed-1", &late);
            code(&mut s, &t)
        },
        ErrorCode::SignatureExpired
    );
    let other = KeyDir::create(&s.root.join("other")).unwrap();
    other.generate(SignatureKind::Ed25519, "ed-9").unwrap();
    let stranger = envelope::sign(&good, &other.signer("ed-9").unwrap()).unwrap();
    assert_eq!(code(&mut s, &stranger), ErrorCode::UnknownSigningKey);
    // Payloads the store would refuse are refused before the nonce is taken.
    let payloads = [
        (
            ContentType::A2aMessage,
            r#"{"content":"x","privacy":"private"}"#,
            None,
            ErrorCode::PrivateWithoutRecipient,
        ),
        (
            ContentType::A2aMessage,
            r#"{"content":"x","ttl_hours":721}"#,
            Some("b"),
            ErrorCode::InvalidTtl,
        ),
        (
            ContentType::A2aMessage,
            r#"{"content":"x","priority":"urgent"}"#,
            Some("b"),
            ErrorCode::InvalidArgument,
        ),
        (
            ContentType::A2aMessage,
            r#"{"content":"x","to":"b"}"#,
            Some("b"),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            ContentType::A2aMessage,
            r#"{"text":"x"}"#,
            Some("b"),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            ContentType::A2aMessage,
            r#"["x"]"#,
            Some("b"),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            ContentType::A2aMessage,
            r#"{"content":1}"#,
            Some("b"),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            ContentType::HandoffBundle,
            r#"{"content":"x","category":"note"}"#,
            Some("b"),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            ContentType::A2aTask,
            r#"{"content":"x"}"#,
            Some("b"),
            ErrorCode::EnvelopeMalformed,
        ),
        (
            ContentType::A2aTask,
            r#"{"title":""}"#,
            Some("b"),
            ErrorCode::EnvelopeMalformed,
        ),
    ];
    for (content_type, payload, recipient, want) in payloads {
        let mut f = fields(content_type, payload, "nonce-refusal-0002");
        f.recipient = recipient.map(str::to_string);
        assert_eq!(
            {
                let t = signed(&s, "ed-1", &f);
                code(&mut s, &t)
            },
            want,
            "{payload}"
        );
    }
    assert!(s.store.read_unread("b", None).unwrap().is_empty());
    assert!(s.store.read_unread("local-beta", None).unwrap().is_empty());
    // None of them took the nonce: the good envelope with it lands.
    let mut fixed = fields(
        ContentType::A2aMessage,
        r#"{"content":"x"}"#,
        "nonce-refusal-0002",
    );
    fixed.recipient = Some("b".into());
    {
        let t = signed(&s, "ed-1", &fixed);
        accept(&mut s, &t)
    }
    .unwrap();
    accept(&mut s, &text).unwrap();
    // Both are public (one directed to b, one to local-beta): b sees both.
    let seen = s.store.read_unread("b", None).unwrap();
    let to: Vec<_> = seen.iter().map(|m| m.to.as_deref()).collect();
    assert_eq!(to.len(), 2);
    assert!(to.contains(&Some("b")) && to.contains(&Some("local-beta")));
}
