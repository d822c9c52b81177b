//! Remote access end to end, over real sockets: enrollment, reconnect, delegation limits,
//! visibility, revocation, adoption, expiry, restart, refusals, and that no secret or scope
//! leaks into a frame or a file where it does not belong.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{A, Broker, Client, TempDir};
use serde_json::{Value, json};

/// A broker serving remote access, with a quick expiry sweep.
struct Remote {
    broker: Broker,
    gateway: PathBuf,
    admin: String,
}

fn start(name: &str) -> Remote {
    let broker = Broker::start_with(name, |c| {
        c.remote_expiry_sweep = Duration::from_millis(50);
    });
    let gateway = broker.handle.as_ref().unwrap().gateway_path().to_path_buf();
    let admin = admin_token(&broker.dir.0);
    Remote {
        broker,
        gateway,
        admin,
    }
}

fn intercom(dir: &Path) -> PathBuf {
    dir.join("intercom")
}

fn admin_token(dir: &Path) -> String {
    let text = std::fs::read_to_string(intercom(dir).join("broker-admin.json")).unwrap();
    let admin: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(admin["version"], 1);
    admin["adminToken"].as_str().unwrap().to_string()
}

fn registration(name: &str, access: Option<Value>) -> Value {
    let mut frame = json!({
        "type": "register",
        "protocol": "pi-intercom",
        "version": 4,
        "sessionId": format!("chosen-{name}"),
        "session": {
            "cwd": "/work", "model": "m", "pid": 7, "startedAt": 1, "lastActivity": 1,
            "name": format!("chosen-{name}"),
        },
    });
    if let Some(access) = access {
        frame["access"] = access;
    }
    frame
}

/// One access_control exchange on a fresh connection: the answer, and that the broker closed
/// the connection after it.
fn control(path: &Path, frame: Value) -> Value {
    let mut c = Client::connect(path);
    c.send(frame);
    let answer = c.recv();
    assert!(c.closed(), "the control connection ends after {answer}");
    answer
}

impl Remote {
    fn local(&self) -> &Path {
        &self.broker.socket
    }

    fn root(&self, name: &str) -> Client {
        let mut c = self.broker.connect();
        let reply = c.register_with(Some(name), name, None, &format!("rt-{name}"));
        assert_eq!(reply["type"], "registered", "{reply}");
        c
    }

    fn admin(&self, action: &str, fields: Value) -> Value {
        let mut frame = json!({
            "type": "access_control", "requestId": format!("r-{action}"),
            "adminToken": self.admin, "action": action,
        });
        for (k, v) in fields.as_object().unwrap() {
            frame[k] = v.clone();
        }
        control(self.local(), frame)
    }

    fn enroll(&self, parent: &str, extra: Value) -> String {
        let mut enrollment = json!({
            "name": "team/manager", "parentSessionId": parent, "rootSessionId": parent,
            "remoteHostId": "host-1",
        });
        for (k, v) in extra.as_object().unwrap() {
            enrollment[k] = v.clone();
        }
        let answer = self.admin("issue_enrollment", json!({ "enrollment": enrollment }));
        assert_eq!(answer["type"], "access_control_result", "{answer}");
        assert_eq!(answer["action"], "issue_enrollment");
        assert!(answer["expiresAt"].is_i64());
        answer["enrollmentToken"].as_str().unwrap().to_string()
    }

    /// Registers over the gateway; the connection and the `registered` frame.
    fn join(&self, name: &str, access: Value) -> (Client, Value) {
        let mut c = Client::connect(&self.gateway);
        c.send(registration(name, Some(access)));
        let reply = c.recv();
        assert_eq!(reply["type"], "registered", "{reply}");
        c.id = reply["sessionId"].as_str().unwrap().to_string();
        (c, reply)
    }

    fn refused(&self, access: Option<Value>) -> Value {
        let mut c = Client::connect(&self.gateway);
        c.send(registration("refused", access));
        let reply = c.recv();
        assert!(c.closed());
        reply
    }

    fn as_principal(&self, registered: &Value, action: &str, fields: Value) -> Value {
        let mut frame = json!({
            "type": "access_control", "requestId": format!("g-{action}"), "action": action,
            "access": credential_of(registered),
        });
        for (k, v) in fields.as_object().unwrap() {
            frame[k] = v.clone();
        }
        control(&self.gateway, frame)
    }

    fn child(&self, parent: &Value, name: &str, extra: Value) -> Value {
        let mut enrollment = json!({ "name": name });
        for (k, v) in extra.as_object().unwrap() {
            enrollment[k] = v.clone();
        }
        self.as_principal(
            parent,
            "issue_child_enrollment",
            json!({ "enrollment": enrollment }),
        )
    }
}

fn credential_of(registered: &Value) -> Value {
    json!({
        "sessionCredential": registered["access"]["sessionCredential"],
        "sessionId": registered["sessionId"],
        "generation": registered["access"]["generation"],
    })
}

fn ids(list: &Value) -> Vec<String> {
    let mut ids: Vec<String> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

fn list(c: &mut Client) -> Vec<String> {
    c.send(json!({ "type": "list", "requestId": "l" }));
    ids(&c.expect("sessions"))
}

fn sorted(mut v: Vec<&str>) -> Vec<String> {
    v.sort();
    v.into_iter().map(str::to_string).collect()
}

fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn audit_events(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(intercom(dir).join("broker-audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("an audit line is JSON"))
        .collect()
}

#[test]
fn gateway_health_files_and_permissions() {
    let r = start("files");
    let mut c = Client::connect(&r.gateway);
    c.send(json!({ "type": "health", "requestId": "h" }));
    let health = c.recv();
    assert_eq!(health["endpoint"], "remote");
    assert_eq!(health["remoteAccess"]["feature"], "remote-access-v1");
    let mut c = r.broker.connect();
    c.send(json!({ "type": "health", "requestId": "h" }));
    assert_eq!(c.recv()["endpoint"], "local");
    // A gateway connection has the remote bucket (60 tokens): the 61st frame at once is refused.
    let mut flood = Client::connect(&r.gateway);
    let mut burst = Vec::new();
    for i in 0..61 {
        let body =
            serde_json::to_vec(&json!({ "type": "health", "requestId": format!("{i}") })).unwrap();
        burst.extend_from_slice(&(body.len() as u32).to_be_bytes());
        burst.extend_from_slice(&body);
    }
    flood.send_raw(&burst);
    let error = flood.expect("error");
    assert_eq!(error["code"], "RATE_LIMITED");
    assert!(flood.closed());
    assert!(
        flood
            .seen
            .iter()
            .filter(|f| f["type"] == "health_ok")
            .count()
            <= 60
    );
    let dir = intercom(&r.broker.dir.0);
    for name in [
        "remote-gateway.sock",
        "broker.sock",
        "broker-access.json",
        "broker-admin.json",
    ] {
        let mode = std::fs::metadata(dir.join(name))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{name}");
    }
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("broker-access.json")).unwrap())
            .unwrap();
    assert_eq!(state["version"], 2);
    assert!(state["adminCredentialHash"].is_string());
    assert_ne!(state["adminCredentialHash"], json!(r.admin));
    assert!(r.admin.len() >= 32);
}

#[test]
fn enrollment_reconnect_replay_and_stale_generation() {
    let r = start("enroll");
    let mut root = r.root("root");
    assert_eq!(
        r.refused(None)["code"],
        "ACCESS_DENIED",
        "a gateway registration needs a credential"
    );
    let token = r.enroll("root", json!({}));
    let (mut remote, registered) = r.join("m", json!({ "enrollmentToken": token }));
    let id = registered["sessionId"].as_str().unwrap().to_string();
    assert_ne!(id, "chosen-m", "the broker assigns the id");
    let keys: Vec<&str> = registered
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        sorted(keys),
        sorted(vec![
            "type",
            "sessionId",
            "protocol",
            "version",
            "remoteAccess",
            "access"
        ])
    );
    let access = &registered["access"];
    assert_eq!(access["origin"], "remote");
    assert_eq!(access["parentSessionId"], "root");
    assert_eq!(access["rootSessionId"], "root");
    assert_eq!(access["remoteHostId"], "host-1");
    assert_eq!(access["generation"], 1);
    assert_eq!(access["depth"], 1);
    assert!(access["sessionCredential"].as_str().unwrap().len() >= 43);
    // The root hears it join, under the principal's name, as a remote session.
    let joined = root.expect("session_joined");
    assert_eq!(joined["session"]["id"], json!(id));
    assert_eq!(joined["session"]["name"], "team/manager");
    assert_eq!(joined["session"]["trustedLocal"], false);
    assert_eq!(joined["session"]["origin"], "remote");
    assert_eq!(list(&mut remote), sorted(vec!["root", &id]));

    // The token was consumed: a replay is refused.
    assert_eq!(
        r.refused(Some(json!({ "enrollmentToken": token })))["code"],
        "ACCESS_DENIED"
    );
    // The credential is live: a second connection with it is refused.
    let reuse = r.refused(Some(credential_of(&registered)));
    assert_eq!(reuse["code"], "ACCESS_DENIED");
    assert_eq!(
        reuse["error"],
        "Remote session credential is already active"
    );
    drop(remote);
    let left = root.expect("session_left");
    assert_eq!(left["sessionId"], json!(id));
    let (_again, reconnected) = r.join("again", credential_of(&registered));
    assert_eq!(reconnected["sessionId"], json!(id));
    assert!(reconnected["access"].get("sessionCredential").is_none());
    // A stale generation and a wrong credential are refused.
    let mut stale = credential_of(&registered);
    stale["generation"] = json!(2);
    assert_eq!(r.refused(Some(stale))["code"], "ACCESS_DENIED");
    let mut wrong = credential_of(&registered);
    wrong["sessionCredential"] = json!("x".repeat(43));
    assert_eq!(
        r.refused(Some(wrong))["error"],
        "Remote registration credential was rejected"
    );
    let events: Vec<Value> = audit_events(&r.broker.dir.0)
        .into_iter()
        .map(|e| e["event"].clone())
        .collect();
    for event in [
        "enrollment_issued",
        "enrollment_consumed",
        "remote_connect",
        "remote_reconnect",
        "remote_disconnect",
        "credential_reuse_denied",
        "remote_registration_denied",
    ] {
        assert!(events.contains(&json!(event)), "{event} in {events:?}");
    }
}

#[test]
fn delegation_limits_and_visibility() {
    let r = start("tree");
    let _root = r.root("root");
    let mut unrelated = r.root("unrelated");
    let token = r.enroll(
        "root",
        json!({ "canDelegate": true, "maxDepth": 3, "maxChildren": 2 }),
    );
    let (mut manager, m) = r.join("m", json!({ "enrollmentToken": token }));
    let lead_token = r.child(
        &m,
        "team/lead",
        json!({ "canDelegate": true, "maxDepth": 3, "maxChildren": 1 }),
    );
    assert_eq!(
        lead_token["action"], "issue_child_enrollment",
        "{lead_token}"
    );
    assert_eq!(lead_token["parentSessionId"], m["sessionId"]);
    let (_lead, l) = r.join(
        "l",
        json!({ "enrollmentToken": lead_token["enrollmentToken"] }),
    );
    assert_eq!(l["access"]["depth"], 2);
    assert_eq!(l["access"]["parentSessionId"], m["sessionId"]);
    assert_eq!(l["access"]["rootSessionId"], "root");
    let worker_token = r.child(&l, "team/worker", json!({}));
    let (mut worker, w) = r.join(
        "w",
        json!({ "enrollmentToken": worker_token["enrollmentToken"] }),
    );
    assert_eq!(w["access"]["depth"], 3);
    assert_eq!(w["access"]["canDelegate"], false);
    // The worker cannot delegate; the lead's one child is used; the depth is exhausted.
    assert_eq!(r.child(&w, "x", json!({}))["code"], "ACCESS_DENIED");
    assert_eq!(r.child(&l, "y", json!({}))["code"], "ACCESS_DENIED");
    let sibling_token = r.child(&m, "team/sibling", json!({}));
    let (_sibling, s) = r.join(
        "s",
        json!({ "enrollmentToken": sibling_token["enrollmentToken"] }),
    );
    let exhausted = r.child(&m, "team/too-many", json!({}));
    assert_eq!(exhausted["code"], "ACCESS_DENIED");
    assert_eq!(
        exhausted["error"],
        "Remote delegation limits denied the request"
    );
    // A delegating enrollment without room below it is refused by the registry's rules.
    let no_room = r.admin(
        "issue_enrollment",
        json!({ "enrollment": {
            "name": "n", "parentSessionId": "root", "rootSessionId": "root",
            "remoteHostId": "h", "canDelegate": true, "maxDepth": 1, "maxChildren": 1,
        }}),
    );
    assert_eq!(no_room["code"], "INVALID_REQUEST", "{no_room}");

    let (mid, lid, wid, sid) = (
        m["sessionId"].as_str().unwrap(),
        l["sessionId"].as_str().unwrap(),
        w["sessionId"].as_str().unwrap(),
        s["sessionId"].as_str().unwrap(),
    );
    assert_eq!(list(&mut worker), sorted(vec!["root", mid, lid, wid]));
    assert_eq!(list(&mut manager), sorted(vec!["root", mid, lid, wid, sid]));
    assert_eq!(list(&mut unrelated), sorted(vec!["root", "unrelated"]));
    // Sending to a session the policy hides is "not found", and audited.
    manager.send_message("unrelated", "hidden-1", "hello");
    let denied = manager.expect("delivery_failed");
    assert_eq!(denied["code"], "SESSION_NOT_FOUND");
    assert!(
        audit_events(&r.broker.dir.0)
            .iter()
            .any(|e| e["event"] == "remote_delivery_denied" && e["reason"] == "POLICY_DENIED")
    );
    // Inspection: the manager sees its subtree, the worker only itself and not its ancestors.
    let seen = r.as_principal(&m, "inspect_tree", json!({}));
    let mut inspected: Vec<&str> = seen["principals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    inspected.sort();
    assert_eq!(inspected, sorted(vec![mid, lid, wid, sid]));
    for p in seen["principals"].as_array().unwrap() {
        assert!(p.get("credentialHash").is_none());
        assert_eq!(p["connected"], true);
    }
    assert_eq!(
        r.as_principal(&w, "inspect_tree", json!({ "principalId": mid }))["code"],
        "ACCESS_DENIED"
    );
    let own = r.as_principal(&w, "inspect_tree", json!({}));
    assert_eq!(own["principals"].as_array().unwrap().len(), 1);
}

#[test]
fn revoke_closes_live_sockets_tells_peers_and_fences_replays() {
    let r = start("revoke");
    let mut root = r.root("root");
    let token = r.enroll(
        "root",
        json!({ "canDelegate": true, "maxDepth": 2, "maxChildren": 1 }),
    );
    let (mut m, mr) = r.join("m", json!({ "enrollmentToken": token }));
    let mid = mr["sessionId"].as_str().unwrap().to_string();
    let child = r.child(&mr, "team/child", json!({}));
    let (mut c, cr) = r.join("c", json!({ "enrollmentToken": child["enrollmentToken"] }));
    let cid = cr["sessionId"].as_str().unwrap().to_string();
    // A delivered message (a result kept for duplicate suppression), an open ask to the child,
    // and a pending (unacknowledged) ask to the manager.
    root.send_message(&mid, "before", "hi");
    let delivered = m.expect("message");
    m.send(json!({ "type": "message_received", "deliveryId": delivered["deliveryId"] }));
    root.expect("delivered");
    root.send(json!({
        "type": "send", "to": cid,
        "message": { "id": "open-ask", "timestamp": 1, "expectsReply": true,
                     "content": { "text": "q" } },
    }));
    let asked = c.expect("message");
    c.send(json!({ "type": "message_received", "deliveryId": asked["deliveryId"] }));
    root.expect("delivered");
    root.send(json!({
        "type": "send", "to": mid,
        "message": { "id": "pending-ask", "timestamp": 1, "expectsReply": true,
                     "content": { "text": "q" } },
    }));
    root.expect("delivery_accepted");
    m.expect("message");

    let answer = r.admin("revoke_subtree", json!({ "principalId": mid }));
    let mut changed: Vec<&str> = answer["changedPrincipalIds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    changed.sort();
    assert_eq!(changed, sorted(vec![&mid, &cid]));
    assert!(m.closed(), "the revoked principal's socket is closed");
    assert!(c.closed(), "so is its child's");
    let failed = root.expect("delivery_failed");
    assert_eq!(failed["messageId"], "pending-ask");
    assert_eq!(failed["code"], "RECIPIENT_DISCONNECTED");
    let cancelled = root.expect("ask_cancelled");
    assert_eq!(cancelled["messageId"], "open-ask");
    assert_eq!(cancelled["reason"], "authorization_revoked");
    let mut left: Vec<String> = Vec::new();
    while left.len() < 2 {
        left.push(
            root.expect("session_left")["sessionId"]
                .as_str()
                .unwrap()
                .into(),
        );
    }
    left.sort();
    assert_eq!(left, sorted(vec![&mid, &cid]));
    // The earlier result is not replayed: the send is decided anew, and the target is gone.
    root.send_message(&mid, "before", "hi");
    assert_eq!(root.expect("delivery_failed")["code"], "SESSION_NOT_FOUND");
    assert_eq!(
        r.refused(Some(credential_of(&mr)))["code"],
        "ACCESS_DENIED",
        "a revoked credential is refused"
    );
    let revoked: Vec<Value> = audit_events(&r.broker.dir.0)
        .into_iter()
        .filter(|e| e["event"] == "principal_revoked")
        .collect();
    assert_eq!(revoked.len(), 2);
    assert!(revoked.iter().all(|e| e["reason"] == "DISCONNECTED"));
}

#[test]
fn adoption_moves_a_subtree_and_fences_the_old_generation() {
    let r = start("adopt");
    let _root = r.root("root");
    let _other = r.root("other");
    let token = r.enroll(
        "root",
        json!({ "canDelegate": true, "maxDepth": 2, "maxChildren": 1 }),
    );
    let (mut m, mr) = r.join("m", json!({ "enrollmentToken": token }));
    let child = r.child(&mr, "team/child", json!({}));
    let (mut c, cr) = r.join("c", json!({ "enrollmentToken": child["enrollmentToken"] }));
    let cid = cr["sessionId"].as_str().unwrap().to_string();
    m.expect("session_joined");
    let adopted = r.admin(
        "adopt_subtree",
        json!({ "principalId": cid, "newParentSessionId": "other" }),
    );
    let principals = adopted["principals"].as_array().unwrap();
    assert_eq!(principals.len(), 1, "{adopted}");
    assert_eq!(principals[0]["parentSessionId"], "other");
    assert_eq!(principals[0]["rootSessionId"], "other");
    assert_eq!(principals[0]["generation"], 2);
    assert_eq!(principals[0]["connected"], false);
    assert!(c.closed());
    assert_eq!(m.expect("session_left")["sessionId"], json!(cid));
    assert_eq!(r.refused(Some(credential_of(&cr)))["code"], "ACCESS_DENIED");
    let mut moved = credential_of(&cr);
    moved["generation"] = json!(2);
    let (_c2, again) = r.join("c2", moved);
    assert_eq!(again["access"]["parentSessionId"], "other");
    let mid = mr["sessionId"].as_str().unwrap();
    assert_eq!(list(&mut m), sorted(vec!["root", mid]));
    // A cycle and a missing parent are refused.
    let cycle = r.admin(
        "adopt_subtree",
        json!({ "principalId": mid, "newParentSessionId": mid }),
    );
    assert_eq!(cycle["code"], "ACCESS_DENIED");
    let missing = r.admin(
        "adopt_subtree",
        json!({ "principalId": mid, "newParentSessionId": "nobody" }),
    );
    assert_eq!(
        missing["error"],
        "Adoption parent must be an active local or remote principal"
    );
}

#[test]
fn expiry_disconnects_and_refuses_the_credential() {
    let r = start("expiry");
    let mut root = r.root("root");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let token = r.enroll("root", json!({ "expiresAt": now + 400 }));
    let (mut e, er) = r.join("e", json!({ "enrollmentToken": token }));
    let eid = er["sessionId"].clone();
    assert!(e.closed(), "an expired principal is disconnected");
    assert_eq!(root.expect("session_left")["sessionId"], eid);
    assert_eq!(r.refused(Some(credential_of(&er)))["code"], "ACCESS_DENIED");
    eventually("principal_expired in the audit log", || {
        audit_events(&r.broker.dir.0)
            .iter()
            .any(|a| a["event"] == "principal_expired" && a["actorId"] == eid)
    });
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(intercom(&r.broker.dir.0).join("broker-access.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        state["principals"][eid.as_str().unwrap()]["state"],
        "revoked"
    );
}

#[test]
fn administration_refusals() {
    let r = start("refusals");
    let mut root = r.root("root");
    let bad = control(
        r.local(),
        json!({ "type": "access_control", "requestId": "x", "adminToken": "wrong",
                "action": "inspect_tree", "principalId": "p" }),
    );
    assert_eq!(bad["code"], "ACCESS_DENIED");
    assert_eq!(
        bad["error"],
        "Remote access control credential or request was rejected"
    );
    assert_eq!(
        r.admin("explode", json!({}))["code"],
        "INVALID_REQUEST",
        "an unknown action"
    );
    assert_eq!(
        r.admin("inspect_tree", json!({ "principalId": "  " }))["error"],
        "Invalid remote principal ID"
    );
    let not_root = r.admin(
        "issue_enrollment",
        json!({ "enrollment": { "name": "n", "parentSessionId": "root",
                 "rootSessionId": "elsewhere", "remoteHostId": "h" } }),
    );
    assert_eq!(
        not_root["error"],
        "Enrollment parent must be an active local root session"
    );
    let bad_ttl = r.admin(
        "issue_enrollment",
        json!({ "enrollment": { "name": "n", "parentSessionId": "root",
                 "rootSessionId": "root", "remoteHostId": "h", "ttlMs": 86_400_001 } }),
    );
    assert_eq!(bad_ttl["code"], "INVALID_REQUEST");
    let wrong_type = r.admin(
        "issue_enrollment",
        json!({ "enrollment": { "name": 1, "parentSessionId": "root",
                 "rootSessionId": "root", "remoteHostId": "h" } }),
    );
    assert_eq!(wrong_type["error"], "Invalid remote enrollment request");
    // access_control on a registered connection is refused and ends it.
    root.send(
        json!({ "type": "access_control", "requestId": "x", "adminToken": r.admin,
                      "action": "inspect_tree", "principalId": "p" }),
    );
    let error = root.expect("error");
    assert_eq!(
        error["error"],
        "Remote access control requires a short-lived control connection"
    );
    assert!(root.closed());
    // The admin token does not work on the gateway, nor a made-up credential.
    let gateway_admin = control(
        &r.gateway,
        json!({ "type": "access_control", "requestId": "x", "adminToken": r.admin,
                "action": "inspect_tree" }),
    );
    assert_eq!(gateway_admin["code"], "ACCESS_DENIED");
    let forged = control(
        &r.gateway,
        json!({ "type": "access_control", "requestId": "x", "action": "inspect_tree",
                "access": { "sessionCredential": "c", "sessionId": "s", "generation": 1 } }),
    );
    assert_eq!(forged["error"], "Remote control credential was rejected");
}

#[test]
fn restart_keeps_the_registry() {
    let mut r = start("restart");
    let root = r.root("root");
    let first = r.enroll("root", json!({}));
    let second = r.enroll("root", json!({}));
    let (a, ar) = r.join("a", json!({ "enrollmentToken": first }));
    let (b, br) = r.join("b", json!({ "enrollmentToken": second }));
    r.admin("revoke_subtree", json!({ "principalId": br["sessionId"] }));
    drop((a, b, root));
    r.broker.restart();
    assert_eq!(
        admin_token(&r.broker.dir.0),
        r.admin,
        "the admin token survives"
    );
    let _root = r.root("root");
    let (_a, again) = r.join("a", credential_of(&ar));
    assert_eq!(again["sessionId"], ar["sessionId"]);
    assert_eq!(r.refused(Some(credential_of(&br)))["code"], "ACCESS_DENIED");
    assert_eq!(
        r.refused(Some(json!({ "enrollmentToken": first })))["code"],
        "ACCESS_DENIED"
    );
}

#[test]
fn a_broken_registry_refuses_the_start_and_is_kept() {
    let dir = TempDir::new("broken");
    let intercom = intercom(&dir.0);
    std::fs::create_dir_all(&intercom).unwrap();
    std::fs::set_permissions(&intercom, std::fs::Permissions::from_mode(0o700)).unwrap();
    let path = intercom.join("broker-access.json");
    std::fs::write(&path, b"{\"version\":2,\"principals\":[]}").unwrap();
    let err = agent_intercom_broker::start(common::config(&dir.0))
        .err()
        .expect("refused");
    assert!(err.to_string().contains("broker-access.json"), "{err}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"{\"version\":2,\"principals\":[]}"
    );
    // A planted symbolic link is refused, not followed.
    std::fs::remove_file(&path).unwrap();
    let target = dir.0.join("elsewhere.json");
    std::fs::write(&target, b"{}").unwrap();
    std::os::unix::fs::symlink(&target, &path).unwrap();
    assert!(agent_intercom_broker::start(common::config(&dir.0)).is_err());
    assert_eq!(std::fs::read(&target).unwrap(), b"{}");
}

#[test]
fn no_secret_or_scope_where_it_does_not_belong() {
    let r = start("leaks");
    let mut root = r.broker.connect();
    let reply = root.register_with(Some("root"), "root", Some(A), "rt-root");
    assert_eq!(reply["type"], "registered");
    let token = r.enroll("root", json!({}));
    let mut remote = Client::connect(&r.gateway);
    let mut frame = registration("m", Some(json!({ "enrollmentToken": token })));
    frame["scopeId"] = json!(A);
    remote.send(frame);
    let registered = remote.recv();
    assert_eq!(registered["type"], "registered", "{registered}");
    let credential = registered["access"]["sessionCredential"]
        .as_str()
        .unwrap()
        .to_string();
    remote.send(json!({ "type": "list", "requestId": "l" }));
    remote.expect("sessions");
    root.send_message(registered["sessionId"].as_str().unwrap(), "m1", "hello");
    remote.expect("message");
    root.expect("delivery_accepted");
    drop(remote);
    root.expect("session_left");
    // The root's frames never carried the remote's secrets.
    let heard = serde_json::to_string(&root.seen).unwrap();
    assert!(!heard.contains(&credential) && !heard.contains(&token));
    // No file of the broker's holds a token, a credential or the scope (the admin token is in
    // broker-admin.json by design, and only there).
    let dir = intercom(&r.broker.dir.0);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() || path.extension().is_some_and(|e| e == "sock") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for secret in [token.as_str(), credential.as_str(), A] {
            assert!(!text.contains(secret), "{} holds a secret", path.display());
        }
        if !path.ends_with("broker-admin.json") {
            assert!(
                !text.contains(&r.admin),
                "{} holds the admin token",
                path.display()
            );
        }
    }
}

#[test]
fn a_registry_change_that_cannot_be_stored_is_not_made() {
    let r = start("unstored");
    let _root = r.root("root");
    let token = r.enroll("root", json!({}));
    // The registry file becomes a directory: every write of the registry fails from here.
    let file = intercom(&r.broker.dir.0).join("broker-access.json");
    let kept = std::fs::read(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let refused = r.admin(
        "issue_enrollment",
        json!({ "enrollment": { "name": "n", "parentSessionId": "root",
                 "rootSessionId": "root", "remoteHostId": "h" } }),
    );
    assert_eq!(refused["code"], "INVALID_REQUEST", "{refused}");
    assert_eq!(
        refused["error"],
        "Remote access state could not be stored; nothing was changed"
    );
    // Consuming the token cannot be stored either: refused, and the token is not used up.
    let consumed = r.refused(Some(json!({ "enrollmentToken": token })));
    assert_eq!(consumed["code"], "ACCESS_DENIED");
    std::fs::remove_dir(&file).unwrap();
    std::fs::write(&file, &kept).unwrap();
    let (_remote, registered) = r.join("m", json!({ "enrollmentToken": token }));
    assert_eq!(registered["access"]["parentSessionId"], "root");
}
