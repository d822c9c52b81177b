//! The public configuration and its `PeerPolicy` (docs/line.md §1.3): exact shapes, bounds,
//! independent actions, exact selectors. Tests are named by requirement (L-NN).

mod common;

use agent_intercom_line::Code;
use agent_intercom_line::policy::{self, Action, PeerPolicy, Target};
use common::*;
use serde_json::{Value, json};

fn policy_code(p: &Value) -> Option<Code> {
    PeerPolicy::from_json(&p.to_string()).err().map(|e| e.code)
}

fn target<'a>() -> Target<'a> {
    Target {
        peer_id: PEER,
        purpose: "public-summary",
        task_schema: "public-text@1",
        category: "public-task",
        endpoint: Some(ENDPOINT),
    }
}

#[test]
fn r04_config_is_exactly_workload_id_signing_key_id_policy() {
    let good = config(policy(1, |_| {}));
    let parsed = parse_config(&good).unwrap();
    assert_eq!(parsed.workload_id, WORKLOAD);
    assert_eq!(parsed.signing_key_id, "workload-key-1");
    assert_eq!(parsed.policy.generation, 1);
    for member in ["workload_id", "signing_key_id", "policy"] {
        let mut c = good.clone();
        c.as_object_mut().unwrap().remove(member);
        let e = parse_config(&c).unwrap_err();
        assert_eq!(e.code, Code::ConfigInvalid, "{member}");
    }
    for extra in [
        "database_url",
        "signing_key",
        "operator_credential",
        "Policy",
    ] {
        let mut c = good.clone();
        c[extra] = json!("x");
        assert_eq!(
            parse_config(&c).unwrap_err().code,
            Code::ConfigInvalid,
            "{extra}"
        );
    }
    // Duplicate members, a non-object, a non-UUID workload, a bad key id.
    let dup = format!(
        r#"{{"workload_id":"{WORKLOAD}","workload_id":"{WORKLOAD}","signing_key_id":"k",{}}}"#,
        format_args!(r#""policy":{}"#, policy(1, |_| {}))
    );
    assert_eq!(PeerPolicyConfig::code(&dup), Some(Code::ConfigInvalid));
    assert_eq!(PeerPolicyConfig::code("[]"), Some(Code::ConfigInvalid));
    for (member, value) in [
        ("workload_id", json!("00000000-0000-4000-8000-00000000000A")),
        ("workload_id", json!("not-a-uuid")),
        ("signing_key_id", json!("")),
        ("signing_key_id", json!("has space")),
        ("signing_key_id", json!("quo\"te")),
        ("signing_key_id", json!(7)),
    ] {
        let mut c = good.clone();
        c[member] = value.clone();
        assert_eq!(
            parse_config(&c).unwrap_err().code,
            Code::ConfigInvalid,
            "{member} {value}"
        );
    }
    // A bad policy inside is the policy's refusal.
    let mut c = good.clone();
    c["policy"]["generation"] = json!(0);
    assert_eq!(parse_config(&c).unwrap_err().code, Code::PolicyInvalid);
}

struct PeerPolicyConfig;
impl PeerPolicyConfig {
    fn code(text: &str) -> Option<Code> {
        agent_intercom_line::config::PublicConfig::from_json(text)
            .err()
            .map(|e| e.code)
    }
}

#[test]
fn r04_config_path_must_be_absolute() {
    let e = agent_intercom_line::config::PublicConfig::load("config.json").unwrap_err();
    assert_eq!(e.code, Code::NotAbsolute);
    let e =
        agent_intercom_line::config::PublicConfig::load("/nonexistent/config.json").unwrap_err();
    assert_eq!(e.code, Code::ConfigInvalid);
}

#[test]
fn r19_policy_is_the_exact_record_shape() {
    assert!(policy_code(&policy(1, |_| {})).is_none());
    for member in policy::MEMBERS {
        let p = policy(1, |p| {
            p.as_object_mut().unwrap().remove(*member);
        });
        assert_eq!(
            policy_code(&p),
            Some(Code::PolicyInvalid),
            "without {member}"
        );
    }
    for extra in ["wildcards", "Generation", "limit", "native_actions"] {
        let p = policy(1, |p| p[extra] = json!([]));
        assert_eq!(policy_code(&p), Some(Code::PolicyInvalid), "with {extra}");
    }
    for kind in policy::LIMIT_KINDS {
        let p = policy(1, |p| {
            p["limits"].as_object_mut().unwrap().remove(*kind);
        });
        assert_eq!(
            policy_code(&p),
            Some(Code::PolicyInvalid),
            "limits without {kind}"
        );
        for member in policy::LIMIT_MEMBERS {
            let p = policy(1, |p| {
                p["limits"][*kind].as_object_mut().unwrap().remove(*member);
            });
            assert_eq!(
                policy_code(&p),
                Some(Code::PolicyInvalid),
                "{kind} without {member}"
            );
            for bad in [
                json!(-1),
                json!(1.5),
                json!("1"),
                json!(null),
                json!(9_007_199_254_740_992u64),
            ] {
                let p = policy(1, |p| p["limits"][*kind][*member] = bad.clone());
                assert_eq!(
                    policy_code(&p),
                    Some(Code::PolicyInvalid),
                    "{kind}.{member}={bad}"
                );
            }
        }
        let p = policy(1, |p| p["limits"][*kind]["seconds"] = json!(1));
        assert_eq!(
            policy_code(&p),
            Some(Code::PolicyInvalid),
            "{kind} with an extra member"
        );
    }
    let p = policy(1, |p| p["limits"]["global"] = p["limits"]["host"].clone());
    assert_eq!(policy_code(&p), Some(Code::PolicyInvalid));
    for bad in [json!(0), json!(-3), json!("1"), json!(1.0), json!(null)] {
        let p = policy(1, |p| p["generation"] = bad.clone());
        assert_eq!(
            policy_code(&p),
            Some(Code::PolicyInvalid),
            "generation {bad}"
        );
    }
    let e = PeerPolicy::from_json(&policy(1, |p| p["peers"] = json!("x")).to_string()).unwrap_err();
    assert_eq!(e.members, vec![("field", json!("policy.peers"))]);
}

#[test]
fn r19_digest_is_canonical_and_names_every_member() {
    let a = parsed(&policy(1, |_| {}));
    // The same record with its members in another order: the same digest.
    let text = policy(1, |_| {}).to_string();
    let value: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    let reversed: serde_json::Map<String, Value> = value.into_iter().rev().collect();
    let b = PeerPolicy::from_json(&Value::Object(reversed).to_string()).unwrap();
    assert_eq!(a.digest, b.digest);
    // Any change is another digest.
    let c = parsed(&policy(1, |p| {
        p["categories"] = json!(["public-task", "other"])
    }));
    assert_ne!(a.digest, c.digest);
    let d = parsed(&policy(1, |p| p["limits"]["task"]["uses"] = json!(11)));
    assert_ne!(a.digest, d.digest);
}

#[test]
fn r20_durations_are_bounded_integers() {
    for (member, low, high) in [
        ("declaration_seconds", 1, 3600),
        ("task_seconds", 1, 86_400),
        ("network_seconds", 1, 120),
    ] {
        for ok in [low, high] {
            let p = policy(1, |p| {
                p["network_seconds"] = json!(1);
                p[member] = json!(ok);
            });
            assert_eq!(policy_code(&p), None, "{member}={ok}");
        }
    }
    for (member, bad) in [
        ("declaration_seconds", json!(0)),
        ("declaration_seconds", json!(3601)),
        ("task_seconds", json!(0)),
        ("task_seconds", json!(86_401)),
        ("network_seconds", json!(0)),
        ("network_seconds", json!(121)),
        ("network_seconds", json!(10.5)),
        ("task_seconds", json!("60")),
    ] {
        let p = policy(1, |p| p[member] = bad.clone());
        assert_eq!(policy_code(&p), Some(Code::PolicyInvalid), "{member}={bad}");
    }
    // network_seconds never exceeds task_seconds.
    let p = policy(1, |p| {
        p["task_seconds"] = json!(20);
        p["network_seconds"] = json!(21);
    });
    assert_eq!(policy_code(&p), Some(Code::PolicyInvalid));
}

#[test]
fn r21_eight_independent_actions() {
    let eight = &Action::ALL[..8];
    let names: Vec<&str> = eight.iter().map(|a| a.as_str()).collect();
    assert_eq!(
        names,
        [
            "enroll",
            "classify_public",
            "submit",
            "poll",
            "cancel",
            "read",
            "rotate",
            "revoke"
        ]
    );
    for granted in eight {
        let p = parsed(&policy(1, |p| p["actions"] = json!([granted.as_str()])));
        for asked in Action::ALL {
            let result = p.authorize(*asked, &target());
            if asked == granted {
                assert!(result.is_ok(), "{granted:?}");
            } else {
                let e = result.unwrap_err();
                assert_eq!(e.code, Code::Denied, "{granted:?} grants {asked:?}");
                assert_eq!(e.members, vec![("reason", json!("action"))]);
            }
        }
    }
    // The native lab's four grant nothing of the eight.
    let p = parsed(&policy(1, |p| {
        p["actions"] = json!(["admit", "adopt", "resume", "inspect"])
    }));
    for asked in eight {
        assert_eq!(
            p.authorize(*asked, &target()).unwrap_err().code,
            Code::Denied
        );
    }
    for bad in [
        json!(["submit", "submit"]),
        json!(["Submit"]),
        json!(["all"]),
        json!(["*"]),
        json!([1]),
    ] {
        let p = policy(1, |p| p["actions"] = bad.clone());
        assert_eq!(policy_code(&p), Some(Code::PolicyInvalid), "{bad}");
    }
}

#[test]
fn r22_empty_selectors_deny_no_wildcards_byte_exact() {
    let reason = |p: &PeerPolicy, t: &Target<'_>| {
        p.authorize(Action::Submit, t).unwrap_err().members[0]
            .1
            .clone()
    };
    for (member, reason_name) in [
        ("peers", "peer"),
        ("purposes", "purpose"),
        ("task_schemas", "task_schema"),
        ("categories", "category"),
        ("endpoints", "endpoint"),
    ] {
        let p = parsed(&policy(1, |p| p[member] = json!([])));
        assert_eq!(reason(&p, &target()), json!(reason_name), "{member} empty");
    }
    // "*" is a literal name, never a wildcard.
    let p = parsed(&policy(1, |p| {
        p["purposes"] = json!(["*"]);
        p["categories"] = json!(["*"]);
        p["task_schemas"] = json!(["*"]);
    }));
    assert_eq!(reason(&p, &target()), json!("purpose"));
    let star = Target {
        purpose: "*",
        category: "*",
        task_schema: "*",
        ..target()
    };
    assert!(p.authorize(Action::Submit, &star).is_ok());
    // Byte-exact: no case folding, no URL normalisation.
    let p = parsed(&policy(1, |_| {}));
    assert!(p.authorize(Action::Submit, &target()).is_ok());
    for (t, why) in [
        (
            Target {
                purpose: "Public-Summary",
                ..target()
            },
            "purpose",
        ),
        (
            Target {
                purpose: "public-summary ",
                ..target()
            },
            "purpose",
        ),
        (
            Target {
                task_schema: "public-text@1\u{0}",
                ..target()
            },
            "task_schema",
        ),
        (
            Target {
                category: "PUBLIC-TASK",
                ..target()
            },
            "category",
        ),
        (
            Target {
                peer_id: "00000000-0000-4000-8000-00000000000A",
                ..target()
            },
            "peer",
        ),
        (
            Target {
                endpoint: Some("https://PEER.example:443/a2a/jsonrpc"),
                ..target()
            },
            "endpoint",
        ),
        (
            Target {
                endpoint: Some("https://peer.example/a2a/jsonrpc"),
                ..target()
            },
            "endpoint",
        ),
        (
            Target {
                endpoint: Some("https://peer.example:443/a2a/jsonrpc/"),
                ..target()
            },
            "endpoint",
        ),
        (
            Target {
                endpoint: Some("https://peer.example:443/a2a/./jsonrpc"),
                ..target()
            },
            "endpoint",
        ),
    ] {
        assert_eq!(reason(&p, &t), json!(why), "{t:?}");
    }
    // Listed selectors are one spelling each: an uppercase UUID or host, a missing port, a
    // query or user information is refused in the policy itself.
    for (member, bad) in [
        ("peers", "00000000-0000-4000-8000-00000000000A"),
        ("peers", "{00000000-0000-4000-8000-000000000002}"),
        ("endpoints", "https://PEER.example:443/x"),
        ("endpoints", "https://peer.example/x"),
        ("endpoints", "http://peer.example:80/x"),
        ("endpoints", "https://peer.example:443"),
        ("endpoints", "https://peer.example:443/x?q=1"),
        ("endpoints", "https://u@peer.example:443/x"),
        ("endpoints", "https://peer.example:0443/x"),
        ("endpoints", "https://peer.example:65536/x"),
        ("purposes", ""),
        ("purposes", "two words"),
        ("categories", "caf\u{e9}"),
    ] {
        let p = policy(1, |p| p[member] = json!([bad]));
        assert_eq!(
            policy_code(&p),
            Some(Code::PolicyInvalid),
            "{member} {bad:?}"
        );
    }
    let p = policy(1, |p| p["endpoints"] = json!(["https://[::1]:8443/a2a"]));
    assert_eq!(policy_code(&p), None);
    let p = policy(1, |p| p["purposes"] = json!(["a", "a"]));
    assert_eq!(policy_code(&p), Some(Code::PolicyInvalid));
}

#[test]
fn r29_scopes_are_host_purpose_peer_and_peer_schema() {
    let p = parsed(&policy(1, |p| {
        p["peers"] = json!([PEER, PEER_B]);
        p["task_schemas"] = json!(["public-text@1", "other@1"]);
    }));
    let scopes: Vec<(String, String)> = p
        .scopes("inst")
        .into_iter()
        .map(|(k, key, _)| (k.as_str().to_string(), key))
        .collect();
    let want: Vec<(String, String)> = [
        ("host", "inst".to_string()),
        ("purpose", "public-summary".to_string()),
        ("peer", PEER.to_string()),
        ("peer", PEER_B.to_string()),
        ("task", format!("{PEER}/public-text@1")),
        ("task", format!("{PEER}/other@1")),
        ("task", format!("{PEER_B}/public-text@1")),
        ("task", format!("{PEER_B}/other@1")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(scopes, want);
}
