//! `POST /v1/a2a/handoff`: envelopes signed with a peer's key of a real keys directory
//! (`envelope::sign_text`), sent over real sockets, verified and landed in the real store, each
//! refusal with its status and code and nothing landed for it.

use std::net::SocketAddr;
use std::sync::Arc;

use agent_intercom_a2a::Running;
use agent_intercom_a2a::keys::KeyDir;
use agent_intercom_core::envelope::{self, SignatureKind, format_timestamp};
use serde_json::{Value, json};

use crate::client::{Manual, Reply, Tmp, config, key_dir, local_store, request, start};

const ROUTE: &str = "/v1/a2a/handoff";

fn post(addr: SocketAddr, body: &[u8]) -> Reply {
    request(
        addr,
        "POST",
        ROUTE,
        &[("Content-Type", "application/json")],
        body,
    )
}

fn refused(reply: &Reply, status: u16, code: &str) {
    assert_eq!(
        reply.status,
        status,
        "{code}: {}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.json()["error"]["code"], code);
}

/// A peer `alpha` (its own keys directory) enrolled with the service, whose clock is manual.
struct Fixture {
    tmp: Tmp,
    clock: Arc<Manual>,
    peer: KeyDir,
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        let tmp = Tmp::new(name);
        let peer = key_dir(&tmp, "peer");
        peer.generate(SignatureKind::Ed25519, "alpha").unwrap();
        let public = peer.export_public("alpha").unwrap();
        key_dir(&tmp, "service")
            .import_public("alpha", public.as_bytes())
            .unwrap();
        // A key the service never enrolled.
        peer.generate(SignatureKind::Ed25519, "stranger").unwrap();
        Fixture {
            tmp,
            clock: Manual::starting_now(),
            peer,
        }
    }

    fn start(&self) -> Running {
        let mut cfg = config(&self.tmp);
        cfg.keys = Some(self.tmp.0.join("service"));
        cfg.clock = self.clock.clone();
        start(cfg)
    }

    /// An envelope without its signature, sent now, valid for `valid_ms`.
    fn unsigned(&self, kind: &str, payload: Value, nonce: &str, valid_ms: i64) -> Value {
        let now = self.clock.ms();
        json!({
            "format_version": 1,
            "sent_at": format_timestamp(now),
            "sender": {"agent_id": "agent-alpha", "agent_type": "coding-agent",
                       "daemon_fingerprint": "sha256:test", "capabilities": [kind]},
            "recipient": "bob",
            "content_type": kind,
            "payload": payload,
            "metadata": {"trace_id": "t-1"},
            "nonce": nonce,
            "expires_at": format_timestamp(now + valid_ms),
        })
    }

    fn signed_by(&self, key: &str, unsigned: &Value) -> String {
        let signer = self.peer.signer(key).unwrap();
        envelope::sign_text(&unsigned.to_string(), &signer).unwrap()
    }

    fn signed(&self, unsigned: &Value) -> String {
        self.signed_by("alpha", unsigned)
    }
}

#[test]
fn a_signed_envelope_lands_as_its_senders_message_or_task() {
    let fx = Fixture::new("handoff-ok");
    let service = fx.start();
    let addr = service.addr();
    let payload = json!({"content": "please review the parser", "privacy": "private"});
    let envelope = fx.signed(&fx.unsigned("a2a_message", payload, &"a".repeat(32), 600_000));
    let reply = post(addr, envelope.as_bytes());
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let landed = reply.json();
    assert_eq!(landed["content_type"], "a2a_message");
    assert_eq!(landed["sender"], "agent-alpha");
    assert_eq!(landed["key_id"], "alpha");
    assert_eq!(landed["nonce"], "a".repeat(32));
    let message_id = landed["message"]["id"].as_str().unwrap().to_string();
    // The recipient reads it from the store, from the sender, privately.
    let mut store = local_store(&fx.tmp);
    let unread = store.read_unread("bob", None).unwrap();
    assert_eq!(unread.len(), 1);
    assert_eq!(unread[0].id, message_id);
    assert_eq!(unread[0].from, "agent-alpha");
    assert_eq!(unread[0].content, "please review the parser");
    assert_eq!(unread[0].privacy, "private");
    // A task: created by the sender, assigned to the recipient, submitted.
    let task = fx.unsigned(
        "a2a_task",
        json!({"title": "Fix the flaky test"}),
        &"b".repeat(32),
        600_000,
    );
    let reply = post(addr, fx.signed(&task).as_bytes());
    assert_eq!(reply.status, 201);
    let id = reply.json()["task"]["id"].as_str().unwrap().to_string();
    let stored = store.task(&id, "bob").unwrap();
    assert_eq!(
        (stored.creator.as_str(), stored.assignee.as_deref()),
        ("agent-alpha", Some("bob"))
    );
    assert_eq!(stored.state, "submitted");
    assert_eq!(stored.title, "Fix the flaky test");
}

#[test]
fn unsigned_tampered_replayed_expired_and_oversized_envelopes_are_refused() {
    let fx = Fixture::new("handoff-refused");
    let service = fx.start();
    let addr = service.addr();
    let payload = json!({"content": "original"});
    let unsigned = fx.unsigned("a2a_message", payload, &"c".repeat(32), 60_000);
    refused(
        &post(addr, unsigned.to_string().as_bytes()),
        401,
        "SIGNATURE_MISSING",
    );
    let good = fx.signed(&unsigned);
    let mut tampered: Value = serde_json::from_str(&good).unwrap();
    tampered["payload"]["content"] = json!("changed on the way");
    refused(
        &post(addr, tampered.to_string().as_bytes()),
        401,
        "SIGNATURE_INVALID",
    );
    let mut redirected: Value = serde_json::from_str(&good).unwrap();
    redirected["recipient"] = json!("mallory");
    refused(
        &post(addr, redirected.to_string().as_bytes()),
        401,
        "SIGNATURE_INVALID",
    );
    let stranger = fx.signed_by("stranger", &unsigned);
    refused(&post(addr, stranger.as_bytes()), 401, "UNKNOWN_SIGNING_KEY");
    refused(
        &post(addr, b"{\"format_version\":1"),
        400,
        "ENVELOPE_MALFORMED",
    );
    let mut future: Value = serde_json::from_str(&good).unwrap();
    future["format_version"] = json!(2);
    refused(
        &post(addr, future.to_string().as_bytes()),
        400,
        "UNSUPPORTED_FORMAT_VERSION",
    );
    // Accepted once; the same envelope again is a replay.
    assert_eq!(post(addr, good.as_bytes()).status, 201);
    refused(&post(addr, good.as_bytes()), 401, "REPLAYED");
    // Expired: signed for a minute, arriving after it.
    let short = fx.signed(&fx.unsigned(
        "a2a_message",
        json!({"content": "late"}),
        &"d".repeat(32),
        60_000,
    ));
    fx.clock.advance_ms(60_001);
    refused(&post(addr, short.as_bytes()), 401, "SIGNATURE_EXPIRED");
    // Over the envelope's 2 MiB (inside the route's limit), and over the route's limit.
    let big = fx.unsigned(
        "a2a_message",
        json!({"content": "x".repeat(2 * 1024 * 1024)}),
        &"e".repeat(32),
        60_000,
    );
    refused(
        &post(addr, big.to_string().as_bytes()),
        413,
        "ENVELOPE_TOO_LARGE",
    );
    let huge = vec![b' '; 3 * 1024 * 1024];
    refused(&post(addr, &huge), 413, "ENVELOPE_TOO_LARGE");
    // Only the good envelope landed.
    let mut store = local_store(&fx.tmp);
    let unread = store.read_unread("bob", None).unwrap();
    let contents: Vec<&str> = unread.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(contents, ["original"]);
    let seen = store.read_unread("mallory", None).unwrap();
    assert!(
        seen.iter().all(|m| m.to.as_deref() == Some("bob")),
        "{seen:?}"
    );
}
