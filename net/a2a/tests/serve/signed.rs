//! `--require-signatures`: RFC 9421 signatures of `POST /a2a` made with the real signer
//! (`httpsig::sign_request`) by keys of a real keys directory, sent over real sockets; each
//! refusal with its code, replays refused durably, the identity `a2a:key:<key id>`, and the
//! headers ignored when the flag is off.

use std::net::SocketAddr;
use std::sync::Arc;

use agent_intercom_a2a::{Running, ServeConfig};
use agent_intercom_core::httpsig::{self, EXTENSION_URI, Profile, SignInput, SigningKey};
use serde_json::{Value, json};

use crate::client::{
    Manual, Reply, Sse, Tmp, config, enrolled_peer_key, get, local_store, message, request, start,
};

/// What a signer sends besides the body: the header lines it signed and its signature lines.
struct Signer<'a> {
    key: &'a SigningKey,
    keyid: &'a str,
    /// `created` in UNIX seconds.
    created: i64,
    nonce: &'a str,
}

/// The header lines of a request to `target` signed by `signer`: `headers`, then
/// `Content-Digest`, `Signature-Input` and `Signature`.
fn signed(
    target: &str,
    signer: &Signer<'_>,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Vec<(String, String)> {
    let mut req = httpsig::Request::new("POST", target).unwrap();
    for (k, v) in headers {
        req.headers.push(k, v.as_bytes());
    }
    let input = SignInput {
        key: signer.key,
        keyid: signer.keyid,
        created: signer.created,
        expires: signer.created + 60,
        nonce: signer.nonce,
    };
    let lines = httpsig::sign_request(&Profile::a2a_request(), &req, body, &input).unwrap();
    let mut out: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    out.push(("Content-Digest".into(), lines.content_digest));
    out.push(("Signature-Input".into(), lines.signature_input));
    out.push(("Signature".into(), lines.signature));
    out
}

/// The headers a 1.0 client of this service signs.
const V1: [(&str, &str); 3] = [
    ("Content-Type", "application/json"),
    ("A2A-Version", "1.0"),
    ("A2A-Extensions", EXTENSION_URI),
];

fn post(addr: SocketAddr, path: &str, headers: &[(String, String)], body: &[u8]) -> Reply {
    let refs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    request(addr, "POST", path, &refs, body)
}

/// A 401 with `code`, the signature challenge and what is asked for.
fn refused(reply: &Reply, code: &str) {
    assert_eq!(
        reply.status,
        401,
        "{code}: {}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.json()["error"]["code"], code);
    assert_eq!(reply.header("www-authenticate"), Some("Signature"));
    let accept = reply.header("accept-signature").unwrap();
    assert!(accept.contains("\"@target-uri\"") && accept.contains("agent-intercom-a2a@1"));
}

fn send_body(id: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
           "params": {"message": message(id, "signed work"),
                      "configuration": {"returnImmediately": true}}})
    .to_string()
    .into_bytes()
}

fn rpc_result(reply: &Reply) -> Value {
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let v = reply.json();
    assert!(v.get("error").is_none(), "{v}");
    v["result"].clone()
}

/// A service requiring signatures, with `alpha` and `beta` enrolled and a manual clock.
struct Fixture {
    tmp: Tmp,
    clock: Arc<Manual>,
    alpha: SigningKey,
    beta: SigningKey,
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        let tmp = Tmp::new(name);
        let alpha = enrolled_peer_key(&tmp, "peer-a", "service", "alpha");
        let beta = enrolled_peer_key(&tmp, "peer-b", "service", "beta");
        Fixture {
            tmp,
            clock: Manual::starting_now(),
            alpha,
            beta,
        }
    }

    fn config(&self, require: bool) -> ServeConfig {
        let mut cfg = config(&self.tmp);
        cfg.keys = Some(self.tmp.0.join("service"));
        cfg.require_signatures = require;
        cfg.clock = self.clock.clone();
        cfg
    }

    fn start(&self) -> Running {
        start(self.config(true))
    }

    fn now_s(&self) -> i64 {
        self.clock.ms() / 1000
    }
}

#[test]
fn a_signed_request_is_accepted_as_its_key_once_and_its_task_is_its_keys() {
    let fx = Fixture::new("sig-accept");
    let service = fx.start();
    let addr = service.addr();
    let target = format!("http://{addr}/a2a");
    let body = send_body("m-1");
    let alpha = Signer {
        key: &fx.alpha,
        keyid: "alpha",
        created: fx.now_s(),
        nonce: "nonce-alpha-000001",
    };
    let headers = signed(&target, &alpha, &V1, &body);
    let reply = post(addr, "/a2a", &headers, &body);
    let task = rpc_result(&reply)["task"].clone();
    assert_eq!(reply.header("a2a-extensions"), Some(EXTENSION_URI));
    let id = task["id"].as_str().unwrap().to_string();
    let mut store = local_store(&fx.tmp);
    assert_eq!(store.task(&id, "a2a").unwrap().creator, "a2a:key:alpha");
    // The same request again, byte for byte: a replay.
    refused(&post(addr, "/a2a", &headers, &body), "REPLAYED");
    // The task is alpha's: beta does not see it, alpha does.
    let get = json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": id}});
    let get = get.to_string().into_bytes();
    let beta = Signer {
        key: &fx.beta,
        keyid: "beta",
        created: fx.now_s(),
        nonce: "nonce-beta-0000001",
    };
    let reply = post(addr, "/a2a", &signed(&target, &beta, &V1, &get), &get);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["error"]["code"], -32001);
    let again = Signer {
        nonce: "nonce-alpha-000002",
        ..alpha
    };
    let reply = post(addr, "/a2a", &signed(&target, &again, &V1, &get), &get);
    assert_eq!(rpc_result(&reply)["id"], id.as_str());
    // The nonces outlive the service: after a restart the first request is still a replay.
    drop(service);
    let service = fx.start();
    let addr = service.addr();
    let target = format!("http://{addr}/a2a");
    let fresh = Signer {
        nonce: "nonce-alpha-000001",
        ..alpha
    };
    refused(
        &post(addr, "/a2a", &signed(&target, &fresh, &V1, &body), &body),
        "REPLAYED",
    );
}

#[test]
fn a_stream_is_a_signed_request_like_any_other() {
    let fx = Fixture::new("sig-stream");
    let service = fx.start();
    let addr = service.addr();
    let target = format!("http://{addr}/a2a");
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "SendStreamingMessage",
                      "params": {"message": message("st-1", "signed stream")}})
    .to_string()
    .into_bytes();
    let unsigned = Sse::post(addr, &V1, &body);
    assert_eq!(unsigned.status, 401);
    assert_eq!(unsigned.json()["error"]["code"], "SIGNATURE_MISSING");
    let alpha = Signer {
        key: &fx.alpha,
        keyid: "alpha",
        created: fx.now_s(),
        nonce: "nonce-stream-00001",
    };
    let headers = signed(&target, &alpha, &V1, &body);
    let refs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut stream = Sse::post(addr, &refs, &body);
    assert!(stream.is_stream(), "{:?}", stream.headers);
    assert_eq!(stream.header("a2a-extensions"), Some(EXTENSION_URI));
    let id = stream.result()["task"]["id"].as_str().unwrap().to_string();
    let mut agent = local_store(&fx.tmp);
    assert_eq!(agent.task(&id, "a2a").unwrap().creator, "a2a:key:alpha");
    // The same signed request again is a replay, refused before any stream.
    let replayed = Sse::post(addr, &refs, &body);
    assert_eq!(replayed.status, 401);
    assert_eq!(replayed.json()["error"]["code"], "REPLAYED");
    // Another key may not follow alpha's task.
    let subscribe = json!({"jsonrpc": "2.0", "id": 9, "method": "SubscribeToTask",
                           "params": {"id": id}})
    .to_string()
    .into_bytes();
    let beta = Signer {
        key: &fx.beta,
        keyid: "beta",
        created: fx.now_s(),
        nonce: "nonce-stream-00002",
    };
    let headers = signed(&target, &beta, &V1, &subscribe);
    let refs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        Sse::post(addr, &refs, &subscribe).json()["error"]["code"],
        -32001
    );
    agent.transition_task(&id, "a2a", "working", None).unwrap();
    agent
        .transition_task(&id, "a2a", "completed", None)
        .unwrap();
    assert_eq!(
        stream.result()["statusUpdate"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    assert_eq!(
        stream.result()["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    stream.ends();
}

#[test]
fn every_refusal_has_its_code_and_takes_no_nonce() {
    let fx = Fixture::new("sig-refuse");
    let service = fx.start();
    let addr = service.addr();
    let target = format!("http://{addr}/a2a");
    let body = send_body("m-refused");
    let now = fx.now_s();
    let alpha = Signer {
        key: &fx.alpha,
        keyid: "alpha",
        created: now,
        nonce: "nonce-refused-0001",
    };
    let good = signed(&target, &alpha, &V1, &body);
    let with = |name: &str, value: &str| -> Vec<(String, String)> {
        good.iter()
            .map(|(k, v)| {
                if k.eq_ignore_ascii_case(name) {
                    (k.clone(), value.to_string())
                } else {
                    (k.clone(), v.clone())
                }
            })
            .collect()
    };
    let unsigned: Vec<(String, String)> = V1
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    refused(&post(addr, "/a2a", &unsigned, &body), "SIGNATURE_MISSING");
    let garbage = with("Signature-Input", "a2a=not a list");
    refused(&post(addr, "/a2a", &garbage, &body), "SIGNATURE_MALFORMED");
    // The body changed on the way: its digest no longer matches; with a new digest, the
    // signature no longer verifies.
    let tampered = send_body("m-tampered");
    refused(
        &post(addr, "/a2a", &good, &tampered),
        "CONTENT_DIGEST_MISMATCH",
    );
    let digest = httpsig::content_digest(httpsig::DigestAlgorithm::Sha256, &tampered);
    let redigested = with("Content-Digest", &digest);
    refused(
        &post(addr, "/a2a", &redigested, &tampered),
        "SIGNATURE_INVALID",
    );
    // Beta's key under alpha's id; an id nobody enrolled.
    let wrong_key = Signer {
        key: &fx.beta,
        ..alpha
    };
    let headers = signed(&target, &wrong_key, &V1, &body);
    refused(&post(addr, "/a2a", &headers, &body), "SIGNATURE_INVALID");
    let unknown = Signer {
        keyid: "gamma",
        ..alpha
    };
    let headers = signed(&target, &unknown, &V1, &body);
    refused(&post(addr, "/a2a", &headers, &body), "UNKNOWN_SIGNING_KEY");
    // Signed for another service (another port): not this target.
    let elsewhere = signed("http://127.0.0.1:9/a2a", &alpha, &V1, &body);
    refused(&post(addr, "/a2a", &elsewhere, &body), "SIGNATURE_INVALID");
    // A version header added on the way, which the signature does not cover.
    let mut added = signed(&target, &alpha, &V1[..1], &body);
    added.push(("A2A-Version".into(), "1.0".into()));
    refused(&post(addr, "/a2a", &added, &body), "SIGNATURE_MALFORMED");
    // Too old, and from the future (the limits are 30 s each way).
    let old = Signer {
        created: now - 31,
        ..alpha
    };
    let headers = signed(&target, &old, &V1, &body);
    refused(&post(addr, "/a2a", &headers, &body), "SIGNATURE_EXPIRED");
    let ahead = Signer {
        created: now + 31,
        ..alpha
    };
    let headers = signed(&target, &ahead, &V1, &body);
    refused(
        &post(addr, "/a2a", &headers, &body),
        "SIGNATURE_NOT_YET_VALID",
    );
    // None of them took the nonce: the good request is accepted, once.
    rpc_result(&post(addr, "/a2a", &good, &body));
    refused(&post(addr, "/a2a", &good, &body), "REPLAYED");
    // Sent in time, arriving after its expiry (the clock moved 61 s): expired.
    let late = Signer {
        nonce: "nonce-refused-0002",
        ..alpha
    };
    let headers = signed(&target, &late, &V1, &body);
    fx.clock.advance_ms(61_000);
    refused(&post(addr, "/a2a", &headers, &body), "SIGNATURE_EXPIRED");
    // Signed well but without naming the extension: the JSON-RPC error of A2A (-32008).
    let later = Signer {
        created: fx.now_s(),
        nonce: "nonce-refused-0003",
        ..alpha
    };
    let headers = signed(&target, &later, &V1[..2], &body);
    let reply = post(addr, "/a2a", &headers, &body);
    assert_eq!(reply.status, 200);
    let error = &reply.json()["error"];
    assert_eq!(error["code"], -32008, "{error}");
    assert_eq!(error["data"][0]["metadata"]["extension"], EXTENSION_URI);
    // Only the good request made a task.
    let mut store = local_store(&fx.tmp);
    let query = agent_intercom_scratchpad::A2aQuery {
        sender: "a2a:key:alpha",
        context_id: None,
        state: None,
        updated_after: None,
        limit: 100,
        after: None,
        history: None,
        artifacts: false,
    };
    assert_eq!(store.a2a_list(&query).unwrap().total, 1);
}

#[test]
fn the_signed_target_is_the_public_url_with_the_path_and_query() {
    let fx = Fixture::new("sig-public");
    let mut cfg = fx.config(true);
    cfg.public_url = Some("https://Agents.Example.com:443/team/".into());
    let service = start(cfg);
    let addr = service.addr();
    let body = send_body("m-public");
    let alpha = Signer {
        key: &fx.alpha,
        keyid: "alpha",
        created: fx.now_s(),
        nonce: "nonce-public-00001",
    };
    // What the card says, with the default port written or not: the same target.
    let card = get(addr, "/.well-known/agent-card.json").json();
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        "https://Agents.Example.com:443/team/a2a"
    );
    let headers = signed("https://agents.example.com/team/a2a", &alpha, &V1, &body);
    rpc_result(&post(addr, "/a2a", &headers, &body));
    let second = Signer {
        nonce: "nonce-public-00002",
        ..alpha
    };
    let query = "https://agents.example.com:443/team/a2a?trace=1";
    let headers = signed(query, &second, &V1, &body);
    rpc_result(&post(addr, "/a2a?trace=1", &headers, &body));
    // The bound address is not where this service is reached, nor is another query.
    let third = Signer {
        nonce: "nonce-public-00003",
        ..alpha
    };
    let local = signed(&format!("http://{addr}/a2a"), &third, &V1, &body);
    refused(&post(addr, "/a2a", &local, &body), "SIGNATURE_INVALID");
    let headers = signed(query, &third, &V1, &body);
    refused(
        &post(addr, "/a2a?trace=2", &headers, &body),
        "SIGNATURE_INVALID",
    );
}

#[test]
fn without_the_flag_signature_headers_are_ignored() {
    let fx = Fixture::new("sig-off");
    let service = start(fx.config(false));
    let addr = service.addr();
    let target = format!("http://{addr}/a2a");
    let card = get(addr, "/.well-known/agent-card.json").json();
    assert_eq!(card["capabilities"]["extensions"], json!([]));
    let body = send_body("m-off");
    let alpha = Signer {
        key: &fx.alpha,
        keyid: "alpha",
        created: fx.now_s(),
        nonce: "nonce-off-00000001",
    };
    let good = signed(&target, &alpha, &V1, &body);
    let mut store = local_store(&fx.tmp);
    for round in 0..2 {
        // A correct signature, sent twice, and a broken one: all anonymous requests.
        let reply = post(addr, "/a2a", &good, &body);
        let id = rpc_result(&reply)["task"]["id"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(store.task(&id, "a2a").unwrap().creator, "a2a:anonymous");
        assert_eq!(reply.header("a2a-extensions"), None, "round {round}");
    }
    let mut broken = good.clone();
    broken.retain(|(k, _)| k != "Signature");
    broken.push(("Signature".into(), "a2a=:AAAA:".into()));
    let other = send_body("m-off-2");
    rpc_result(&post(addr, "/a2a", &broken, &other));
}

#[cfg(unix)]
#[test]
fn keys_that_cannot_be_read_refuse_rather_than_accept() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new("sig-keys");
    let service = fx.start();
    let addr = service.addr();
    let target = format!("http://{addr}/a2a");
    let body = send_body("m-keys");
    let alpha = Signer {
        key: &fx.alpha,
        keyid: "alpha",
        created: fx.now_s(),
        nonce: "nonce-keys-0000001",
    };
    // A peer key file anyone may rewrite is not trusted: 500, never an acceptance.
    let file = fx.tmp.0.join("service").join("alpha.ed25519.pub");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let headers = signed(&target, &alpha, &V1, &body);
    let reply = post(addr, "/a2a", &headers, &body);
    assert_eq!(reply.status, 500);
    assert_eq!(reply.json()["error"]["code"], "STORE_IO");
    // Repaired, the same request (its nonce untaken) is accepted.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    rpc_result(&post(addr, "/a2a", &headers, &body));
    drop(service);
    // A keys directory open to others is refused at start, before anything is created.
    let dir = fx.tmp.0.join("service");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    match agent_intercom_a2a::spawn(fx.config(true)) {
        Err(agent_intercom_a2a::StartError::Store(e)) => {
            assert_eq!(e.code().as_str(), "STORE_IO", "{}", e.message())
        }
        Err(other) => panic!("expected STORE_IO, got {other}"),
        Ok(_) => panic!("started with a keys directory open to others"),
    }
}
