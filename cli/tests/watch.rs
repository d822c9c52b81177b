//! `agent-intercom watch --once [--json]` against a real broker: every member of the snapshot,
//! the text view, no scope value in either, a broker that is not running, and the snapshot being
//! the local administrator's alone (the admin token, a fresh local connection).

mod watch_support;

use std::process::{Command, Output};
use std::time::Duration;

use agent_intercom_broker::client::{RawClient, access_control};
use serde_json::{Value, json};
use watch_support::*;

fn watch(dir: &Dir, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-intercom"))
        .arg("watch")
        .arg("--agent-dir")
        .arg(&dir.0)
        .args(args)
        .output()
        .unwrap()
}

fn session<'a>(snapshot: &'a Value, id: &str) -> &'a Value {
    snapshot["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no session {id} in {snapshot}"))
}

#[test]
fn once_json_is_the_snapshot_member_by_member_without_a_scope() {
    let dir = Dir::new("json");
    let broker = start(&dir);
    let _sessions = scenario(&dir.socket());
    let out = watch(&dir, &["--once", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_no_scope(&out.stdout, "watch --once --json");
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "one line of JSON");
    let s: Value = serde_json::from_str(&text).unwrap();

    let keys: Vec<&String> = s.as_object().unwrap().keys().collect();
    let expected = [
        "version", "at", "broker", "counts", "groups", "sessions", "asks", "offline", "traffic",
    ];
    assert_eq!(keys, expected);
    assert_eq!(s["version"], 1);
    assert!(s["at"].as_i64().unwrap() > 1_600_000_000_000);
    assert_eq!(s["broker"]["pid"], std::process::id());
    assert!(s["broker"]["uptimeMs"].is_u64());
    let store = ["", "-wal", "-shm"]
        .iter()
        .filter_map(|x| {
            std::fs::metadata(format!("{}{x}", dir.config().store_path().display())).ok()
        })
        .count();
    assert!(store >= 1 && s["broker"]["storeBytes"].as_u64().unwrap() > 0);
    assert_eq!(
        s["counts"],
        json!({
            "sessions": 4, "remoteSessions": 0, "asks": 2, "deferredAsks": 1,
            "queuedMessages": 1, "queuedBytes": s["counts"]["queuedBytes"],
            "offlineRecipients": 1, "pendingDeliveries": 0,
        })
    );
    assert!(s["counts"]["queuedBytes"].as_u64().unwrap() > 0);
    // Groups in the order their first session registered; the labels stand for the scopes.
    assert_eq!(
        s["groups"],
        json!([
            { "label": "scope 1", "sessions": 2 },
            { "label": "scope 2", "sessions": 1 },
            { "label": "unscoped", "sessions": 1 },
        ])
    );
    let order: Vec<&str> = s["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["alpha", "beta", "gamma", "delta"]);
    let alpha = session(&s, ALPHA);
    let alpha_keys: Vec<&String> = alpha.as_object().unwrap().keys().collect();
    assert_eq!(
        alpha_keys,
        [
            "id",
            "shortId",
            "name",
            "group",
            "model",
            "cwd",
            "status",
            "idleMs",
            "origin",
            "remoteHostId",
            "pid",
            "queued",
            "asking",
        ]
    );
    assert_eq!(alpha["shortId"], "alpha-11");
    assert_eq!(alpha["group"], "scope 1");
    assert_eq!(alpha["model"], "model-alpha");
    assert_eq!(alpha["cwd"], "/work/alpha");
    assert_eq!(alpha["status"], "alpha is busy");
    assert!(alpha["idleMs"].as_u64().unwrap() < 600_000);
    assert_eq!(alpha["origin"], "local");
    assert_eq!(alpha["remoteHostId"], Value::Null);
    assert_eq!(alpha["pid"], 4242);
    assert_eq!(
        (alpha["queued"].as_u64(), alpha["asking"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(session(&s, BETA)["group"], "scope 1");
    assert_eq!(session(&s, GAMMA)["group"], "scope 2");
    assert_eq!(session(&s, DELTA)["group"], "unscoped");
    assert_eq!(session(&s, DELTA)["asking"], 0);

    let asks = s["asks"].as_array().unwrap();
    assert_eq!(asks.len(), 2);
    assert_eq!(
        asks[0]["from"],
        json!({ "id": ALPHA, "shortId": "alpha-11", "name": "alpha", "connected": true })
    );
    assert_eq!(asks[0]["to"]["name"], "beta");
    assert_eq!(asks[0]["deferred"], false);
    assert!(asks[0]["ageMs"].is_i64() && asks[0]["expiresInMs"].as_i64().unwrap() > 0);
    assert_eq!(
        asks[1]["from"],
        json!({ "id": EPSILON, "shortId": "epsilon-", "name": null, "connected": false })
    );
    assert_eq!(asks[1]["to"]["id"], GAMMA);
    assert_eq!(asks[1]["deferred"], true);

    let offline = &s["offline"];
    assert_eq!(offline.as_array().unwrap().len(), 1);
    assert_eq!(offline[0]["id"], OMEGA);
    assert_eq!(offline[0]["shortId"], "omega-00");
    assert_eq!(offline[0]["queued"], 1);
    assert_eq!(offline[0]["queuedBytes"], s["counts"]["queuedBytes"]);

    let traffic = &s["traffic"];
    assert_eq!(traffic["intervalMs"], 5000);
    for series in ["messages", "asks"] {
        assert_eq!(traffic[series].as_array().unwrap().len(), 60);
    }
    let sum = |k: &str| -> u64 {
        traffic[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .sum()
    };
    // Two asks and one queued message were accepted.
    assert_eq!((sum("messages"), sum("asks")), (3, 2));
    assert_eq!(
        (
            traffic["totalMessages"].as_u64(),
            traffic["totalAsks"].as_u64()
        ),
        (Some(3), Some(2))
    );
    broker.close();
}

#[test]
fn once_prints_the_screen_as_text_without_a_scope() {
    let dir = Dir::new("text");
    let broker = start(&dir);
    let _sessions = scenario(&dir.socket());
    let out = watch(&dir, &["--once"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_no_scope(&out.stdout, "watch --once");
    let text = String::from_utf8(out.stdout).unwrap();
    for shown in [
        "4 sessions (scope 1: 2, scope 2: 1, unscoped: 1)",
        "2 asks (1 deferred)",
        "1 queued",
        "alpha → beta",
        "epsilon- (away) → gamma",
        "deferred",
        "omega-00",
        "Asks in flight (2)",
    ] {
        assert!(text.contains(shown), "{shown:?} not in\n{text}");
    }
    let row = |name: &str| {
        text.lines()
            .find(|l| l.contains(&format!(" {name} ")) && l.contains("busy"))
            .unwrap_or_else(|| panic!("no row for {name} in\n{text}"))
            .to_string()
    };
    assert!(row("alpha").contains("scope 1"));
    assert!(row("gamma").contains("scope 2"));
    assert!(row("delta").contains("unscoped"));
    assert!(!text.contains("q quit"), "no keys on a printed screen");
    let offline = text.lines().find(|l| l.contains("omega-00")).unwrap();
    assert!(
        offline.contains("offline") && offline.contains(" 1 "),
        "{offline}"
    );
    broker.close();
}

#[test]
fn a_broker_that_is_not_running_is_exit_1_with_one_clear_line() {
    let dir = Dir::new("down");
    for args in [&["--once", "--json"][..], &["--once"][..]] {
        let out = watch(&dir, args);
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout.is_empty());
        let err = String::from_utf8(out.stderr).unwrap();
        let socket = dir.socket().display().to_string();
        let expected =
            format!("agent-intercom: error[NOT_CONNECTED]: no broker is running at {socket}: ");
        assert!(err.starts_with(&expected), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // Usage: --json alone, and a missing --agent-dir, are exit 2.
    let out = watch(&dir, &["--json"]);
    assert_eq!(out.status.code(), Some(2));
    let missing = Dir::new("down-missing");
    let gone = missing.0.join("nope");
    let out = Command::new(env!("CARGO_BIN_EXE_agent-intercom"))
        .args(["watch", "--once", "--agent-dir"])
        .arg(&gone)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("agent-intercom: error[IO]: "));
}

#[test]
fn without_a_terminal_the_live_view_refuses_and_points_to_once() {
    let dir = Dir::new("notty");
    let out = watch(&dir, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("agent-intercom: error[INVALID_ARGUMENT]: watch needs a terminal"),
        "{err}"
    );
}

#[test]
fn the_snapshot_is_the_local_administrators_alone() {
    let dir = Dir::new("admin");
    let broker = start(&dir);
    let config = dir.config();
    let _sessions = scenario(&dir.socket());
    let timeout = Duration::from_secs(5);
    let token = agent_intercom_broker::access::read_admin_token(&config.admin_path())
        .unwrap()
        .unwrap();
    let request = |token: &str| json!({ "action": "watch_snapshot", "adminToken": token });
    let ok = access_control(&config.socket_path, &request(&token), timeout).unwrap();
    assert_eq!(ok.value["snapshot"]["counts"]["sessions"], 4);
    assert_no_scope(ok.text.as_bytes(), "the access_control_result");

    // A wrong token: refused as every administrative action is.
    let wrong = "x".repeat(43);
    let refused = access_control(&config.socket_path, &request(&wrong), timeout).unwrap_err();
    assert_eq!(refused.code().as_str(), "ACCESS_DENIED");
    // The right token on the remote gateway: refused (only a session credential speaks there).
    let mut gateway = RawClient::connect(&config.gateway_path).unwrap();
    let mut frame = request(&token);
    frame["type"] = json!("access_control");
    frame["requestId"] = json!("r1");
    gateway.send(&frame).unwrap();
    let answer = expect(&mut gateway, "error");
    assert_eq!(answer["code"], "ACCESS_DENIED");
    // A registered session: refused, whatever the token.
    let mut session = join(&dir.socket(), "nosy-9999", "nosy", Some(SCOPE_A));
    session.send(&frame).unwrap();
    let answer = expect(&mut session, "error");
    assert_eq!(answer["code"], "ACCESS_DENIED");
    assert_no_scope(answer.to_string().as_bytes(), "a refusal");
    broker.close();
}

#[cfg(not(feature = "fault-injection"))]
#[test]
fn the_fault_variable_is_refused_by_a_build_without_fault_injection() {
    let dir = Dir::new("fault");
    let out = Command::new(env!("CARGO_BIN_EXE_agent-intercom"))
        .args(["watch", "--once", "--agent-dir"])
        .arg(&dir.0)
        .env("AGENT_INTERCOM_WATCH_FAULT", "panic")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("AGENT_INTERCOM_WATCH_FAULT is set, but this build has no fault injection"),
        "{err}"
    );
}

#[test]
fn a_remote_principal_is_shown_as_remote_with_its_host_under_its_scope_label() {
    let dir = Dir::new("remote");
    let broker = start(&dir);
    let config = dir.config();
    let _root = join(&dir.socket(), ALPHA, "alpha", Some(SCOPE_A));
    let token = agent_intercom_broker::access::read_admin_token(&config.admin_path())
        .unwrap()
        .unwrap();
    let enrollment = json!({
        "action": "issue_enrollment", "adminToken": token,
        "enrollment": { "name": "far", "parentSessionId": ALPHA, "rootSessionId": ALPHA,
                        "remoteHostId": "build-host-7" },
    });
    let issued = access_control(&config.socket_path, &enrollment, Duration::from_secs(5)).unwrap();
    let mut remote = RawClient::connect(&config.gateway_path).unwrap();
    remote
        .send(&json!({
            "type": "register", "protocol": "pi-intercom", "version": 4, "scopeId": SCOPE_A,
            "session": { "cwd": "/far", "model": "m", "pid": 7, "startedAt": 1, "lastActivity": 1 },
            "access": { "enrollmentToken": issued.value["enrollmentToken"] },
        }))
        .unwrap();
    let id = expect(&mut remote, "registered")["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let out = watch(&dir, &["--once", "--json"]);
    assert!(out.status.success());
    assert_no_scope(&out.stdout, "watch --once --json");
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["counts"]["remoteSessions"], 1);
    let far = session(&s, &id);
    assert_eq!(
        (
            &far["name"],
            &far["origin"],
            &far["remoteHostId"],
            &far["group"]
        ),
        (
            &json!("far"),
            &json!("remote"),
            &json!("build-host-7"),
            &json!("scope 1")
        )
    );
    assert_eq!(session(&s, ALPHA)["origin"], "local");
    let text = watch(&dir, &["--once"]);
    assert_no_scope(&text.stdout, "watch --once");
    let text = String::from_utf8(text.stdout).unwrap();
    let row = text.lines().find(|l| l.contains(" far ")).unwrap();
    assert!(row.contains("remote") && row.contains("scope 1"), "{row}");
    broker.close();
}

/// A socket that answers the first frame of one connection with `answer` (what another broker
/// says), and what that frame was (none when the connection ended first).
fn fake_broker(dir: &Dir, answer: Value) -> std::thread::JoinHandle<Option<Value>> {
    use std::io::{Read, Write};
    let intercom = dir.0.join("intercom");
    std::fs::create_dir_all(&intercom).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(intercom.join("broker.sock")).unwrap();
    std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().ok()?;
        let mut len = [0u8; 4];
        conn.read_exact(&mut len).ok()?;
        let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
        conn.read_exact(&mut body).ok()?;
        let bytes = answer.to_string().into_bytes();
        conn.write_all(&(bytes.len() as u32).to_be_bytes()).ok()?;
        conn.write_all(&bytes).ok()?;
        serde_json::from_slice(&body).ok()
    })
}

#[test]
fn a_broker_without_the_snapshot_or_without_a_token_is_exit_1_saying_so() {
    let refusal = json!({
        "type": "error", "code": "INVALID_REQUEST", "error": "Unknown remote access control action",
    });
    // An older broker: it does not know the action.
    let dir = Dir::new("older");
    let older = fake_broker(&dir, refusal.clone());
    let token = "t".repeat(43);
    let admin = json!({ "version": 1, "adminToken": token }).to_string();
    std::fs::write(dir.0.join("intercom/broker-admin.json"), admin).unwrap();
    let out = watch(&dir, &["--once", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    let expected = format!(
        "agent-intercom: error[INVALID_REQUEST]: the broker at {} does not serve watch_snapshot",
        dir.socket().display()
    );
    assert!(err.starts_with(&expected), "{err}");
    let asked = older.join().unwrap().expect("the request");
    assert_eq!(
        (&asked["type"], &asked["action"], &asked["adminToken"]),
        (
            &json!("access_control"),
            &json!("watch_snapshot"),
            &json!(token)
        )
    );
    // Something answers, but no broker wrote an admin token here: nothing is sent.
    let dir = Dir::new("tokenless");
    let tokenless = fake_broker(&dir, refusal);
    let out = watch(&dir, &["--once"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("agent-intercom: error[ACCESS_DENIED]: "),
        "{err}"
    );
    assert!(
        err.contains("broker-admin.json holds no admin token"),
        "{err}"
    );
    assert_eq!(tokenless.join().unwrap(), None, "nothing was sent");
}
