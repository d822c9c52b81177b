//! Remote access across a crash: after kill -9 and a restart the registry is intact, revoked
//! credentials stay refused, live ones reconnect, and the broker's log holds no secret or scope.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agent_intercom_broker::client::RawClient;
use serde_json::{Value, json};

const SCOPE: &str = "Scope_RemoteCrash01";

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn broker(dir: &Path, log: &Path) -> Child {
    let stderr = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    Command::new(env!("CARGO_BIN_EXE_agent-intercom"))
        .args(["broker", "--log-level", "debug", "--agent-dir"])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::from(stderr))
        .spawn()
        .unwrap()
}

fn wait_healthy(socket: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while agent_intercom_broker::health(socket, Duration::from_millis(200))
        != agent_intercom_broker::Health::Compatible
    {
        assert!(Instant::now() < deadline, "the broker never became healthy");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn exchange(path: &Path, frame: Value) -> (RawClient, Value) {
    let mut client = RawClient::connect(path).unwrap();
    client.send(&frame).unwrap();
    let answer = client
        .recv(Duration::from_secs(5))
        .unwrap()
        .expect("an answer");
    (client, answer)
}

fn register(path: &Path, session_id: &str, access: Option<Value>) -> (RawClient, Value) {
    let mut frame = json!({
        "type": "register", "protocol": "pi-intercom", "version": 4, "sessionId": session_id,
        "scopeId": SCOPE,
        "session": { "cwd": "/w", "model": "m", "pid": 1, "startedAt": 1, "lastActivity": 1,
                     "runtimeInstanceId": format!("rt-{session_id}") },
    });
    if let Some(access) = access {
        frame["access"] = access;
    }
    exchange(path, frame)
}

fn enroll(local: &Path, admin: &str) -> String {
    let (_, answer) = exchange(
        local,
        json!({ "type": "access_control", "requestId": "e", "adminToken": admin,
                "action": "issue_enrollment",
                "enrollment": { "name": "crash/peer", "parentSessionId": "root",
                                "rootSessionId": "root", "remoteHostId": "h" } }),
    );
    answer["enrollmentToken"]
        .as_str()
        .expect("a token")
        .to_string()
}

fn credential(registered: &Value) -> Value {
    json!({
        "sessionCredential": registered["access"]["sessionCredential"],
        "sessionId": registered["sessionId"],
        "generation": registered["access"]["generation"],
    })
}

#[test]
fn kill_9_and_restart_keep_the_registry_and_refuse_revoked_credentials() {
    let dir = Dir(std::env::temp_dir().join(format!("aicr-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let log = dir.0.join("stderr.log");
    let intercom = dir.0.join("intercom");
    let (local, gateway) = (
        intercom.join("broker.sock"),
        intercom.join("remote-gateway.sock"),
    );
    let mut child = broker(&dir.0, &log);
    wait_healthy(&local);
    let admin_text = std::fs::read_to_string(intercom.join("broker-admin.json")).unwrap();
    let admin: Value = serde_json::from_str(&admin_text).unwrap();
    let admin = admin["adminToken"].as_str().unwrap().to_string();
    let (_root, _) = register(&local, "root", None);
    let (keep_token, drop_token) = (enroll(&local, &admin), enroll(&local, &admin));
    let (keep_conn, keep) = register(
        &gateway,
        "k",
        Some(json!({ "enrollmentToken": keep_token })),
    );
    let (drop_conn, dropped) = register(
        &gateway,
        "d",
        Some(json!({ "enrollmentToken": drop_token })),
    );
    assert_eq!(keep["type"], "registered", "{keep}");
    let (_, revoked) = exchange(
        &local,
        json!({ "type": "access_control", "requestId": "r", "adminToken": admin,
                "action": "revoke_subtree", "principalId": dropped["sessionId"] }),
    );
    assert_eq!(
        revoked["changedPrincipalIds"],
        json!([dropped["sessionId"]])
    );
    drop((keep_conn, drop_conn));

    // SAFETY: kill has no memory preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    let mut child = broker(&dir.0, &log);
    wait_healthy(&local);
    assert_eq!(
        std::fs::read_to_string(intercom.join("broker-admin.json")).unwrap(),
        admin_text,
        "the admin credential is kept"
    );
    let (_root, _) = register(&local, "root", None);
    let (_again, again) = register(&gateway, "k", Some(credential(&keep)));
    assert_eq!(again["type"], "registered", "{again}");
    assert_eq!(again["sessionId"], keep["sessionId"]);
    let (_, refused) = register(&gateway, "d", Some(credential(&dropped)));
    assert_eq!(refused["code"], "ACCESS_DENIED");
    let (_, replay) = register(
        &gateway,
        "x",
        Some(json!({ "enrollmentToken": keep_token })),
    );
    assert_eq!(replay["code"], "ACCESS_DENIED");
    child.kill().unwrap();
    child.wait().unwrap();

    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(!stderr.is_empty(), "debug logging wrote something");
    for secret in [
        admin.as_str(),
        keep_token.as_str(),
        drop_token.as_str(),
        keep["access"]["sessionCredential"].as_str().unwrap(),
        SCOPE,
    ] {
        assert!(
            !stderr.contains(secret),
            "the log holds a secret or the scope"
        );
    }
}
