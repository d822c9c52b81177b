//! `agent-intercom serve` as a real process: the address line, a graceful stop on SIGTERM and
//! SIGINT, tasks that survive kill -9, a local agent working through `agent-intercom pad`, a
//! handoff from `agent-intercom pack send --to` read through `pad`, and the options it refuses.

#[path = "../../net/a2a/tests/serve/client.rs"]
#[allow(dead_code)] // the a2a tests use the rest of it
mod client;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use client::{Tmp, message, ok};
use serde_json::{Value, json};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agent-intercom"))
}

/// A `serve` process of a test: killed when the test ends, even by a failed assertion, so no
/// test leaves a server behind.
struct Served(Child);

impl std::ops::Deref for Served {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Served {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Starts `serve` over `db` and reads the address from its one line on stdout.
fn serve(db: &Path, extra: &[&str]) -> (Served, SocketAddr) {
    // The default keys directory beside the store of the test, never the user's.
    let keys = db.parent().unwrap().join("default-keys");
    let mut child = bin()
        .env("AGENT_INTERCOM_KEYS_DIR", keys)
        .arg("serve")
        .arg("--db")
        .arg(db)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let child = Served(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("agent-intercom serve listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    (child, url.parse().unwrap())
}

/// Sends `sig` to a process of this test.
fn signal(child: &Child, sig: i32) {
    // SAFETY: kill has no memory preconditions.
    unsafe { libc::kill(child.id() as i32, sig) };
}

fn pad(db: &Path, op: &str, args: Value) -> Value {
    let out = bin()
        .arg("pad")
        .arg("--db")
        .arg(db)
        .arg(op)
        .arg(args.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pad {op}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn serve_prints_its_address_and_stops_gracefully_on_sigterm_and_sigint() {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let tmp = Tmp::new("cli-stop");
        let (mut child, addr) = serve(&tmp.db(), &[]);
        assert!(addr.ip().is_loopback());
        assert_eq!(
            client::get(addr, "/.well-known/agent-card.json").status,
            200
        );
        signal(&child, sig);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "signal {sig}");
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert!(err.contains("stopped"), "{err}");
    }
}

/// A signal sent the moment the address line is read (before any request) still stops the
/// service gracefully: the handlers are installed before the address is announced.
#[test]
fn a_signal_right_after_the_address_line_is_a_graceful_stop() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        for _ in 0..5 {
            let tmp = Tmp::new("cli-stop-early");
            let (mut child, _addr) = serve(&tmp.db(), &[]);
            signal(&child, sig);
            let status = child.wait().unwrap();
            assert_eq!(status.code(), Some(0), "signal {sig}: {status:?}");
        }
    }
}

#[test]
fn tasks_survive_kill_9_and_a_local_agent_completes_one_through_pad() {
    let tmp = Tmp::new("cli-kill");
    let db = tmp.db();
    let (mut child, addr) = serve(&db, &[]);
    let sent = ok(
        addr,
        "1.0",
        "SendMessage",
        json!({"message": message("k-1", "write the release notes"),
               "configuration": {"returnImmediately": true}}),
    );
    let id = sent["task"]["id"].as_str().unwrap().to_string();
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    // The local agent works on it while the service is down.
    let unread = pad(&db, "unread", json!({"agent": "a2a"}));
    assert_eq!(unread[0]["task_id"], id.as_str());
    assert_eq!(unread[0]["content"], "write the release notes");
    pad(
        &db,
        "task.transition",
        json!({"id": id, "by": "a2a", "to": "working"}),
    );
    let (mut child, addr) = serve(&db, &[]);
    let got = ok(addr, "1.0", "GetTask", json!({"id": id}));
    assert_eq!(got["status"]["state"], "TASK_STATE_WORKING");
    assert_eq!(
        got["history"][0]["parts"][0]["text"],
        "write the release notes"
    );
    // A blocking follow-up is answered when the agent, through pad, completes the task.
    let follow = {
        let id = id.clone();
        std::thread::spawn(move || {
            let mut m = message("k-2", "mention the new flag");
            m["taskId"] = json!(id);
            ok(addr, "1.0", "SendMessage", json!({"message": m}))
        })
    };
    let mut delivered = json!([]);
    for _ in 0..3000 {
        delivered = pad(&db, "unread", json!({"agent": "a2a"}));
        if !delivered.as_array().unwrap().is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(delivered[0]["content"], "mention the new flag");
    pad(
        &db,
        "task.artifact",
        json!({"id": id, "by": "a2a", "name": "notes.md", "content": "# 0.3.0"}),
    );
    pad(
        &db,
        "task.transition",
        json!({"id": id, "by": "a2a", "to": "completed", "reason": "written"}),
    );
    let done = follow.join().unwrap()["task"].clone();
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(done["artifacts"][0]["parts"][0]["text"], "# 0.3.0");
    assert_eq!(done["history"].as_array().unwrap().len(), 2);
    signal(&child, libc::SIGTERM);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

fn refused(args: &[&str]) -> (i32, String) {
    let out = bin()
        .env(
            "AGENT_INTERCOM_KEYS_DIR",
            "/nonexistent/agent-intercom-keys",
        )
        .arg("serve")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn serve_refuses_bad_options_with_a_clear_message() {
    let tmp = Tmp::new("cli-refuse");
    let db = tmp.db().display().to_string();
    let token = tmp.0.join("token");
    std::fs::write(&token, "0123456789abcdef0123\n").unwrap();
    let token = token.display().to_string();
    let agent_dir = tmp.0.join("agent");
    std::fs::create_dir(&agent_dir).unwrap();
    let agent_dir = agent_dir.display().to_string();
    for (args, needle) in [
        (vec!["--listen", "0.0.0.0:0"], "--allow-non-loopback"),
        (
            vec!["--listen", "0.0.0.0:0", "--allow-non-loopback"],
            "--token-file",
        ),
        (vec!["--token-file", token.as_str()], "0600"),
        (vec!["--listen", "somewhere"], "ADDR:PORT"),
        (vec!["--token", "abc"], "unexpected argument '--token'"),
        (vec!["--listen"], "a value is required"),
        (vec!["--assignee", "a", "--assignee", "b"], "multiple times"),
        (vec!["--blocking-timeout", "-1"], "--blocking-timeout"),
        (vec!["--public-url", "example.com"], "http://"),
        (vec!["extra"], "unexpected argument 'extra'"),
        (vec!["--as", "gw"], "--broker"),
        (vec!["--targets", "a,b"], "--broker"),
        (
            vec!["--broker", "--probe-interval", "0"],
            "--probe-interval",
        ),
        (
            vec!["--broker", "--agent-dir", agent_dir.as_str(), "--as", ""],
            "--as must be a non-empty name",
        ),
        (
            vec![
                "--broker",
                "--agent-dir",
                agent_dir.as_str(),
                "--targets",
                "a,,b",
            ],
            "--targets holds \"\"",
        ),
    ] {
        let mut all = vec!["--db", db.as_str()];
        all.extend(args.iter());
        let (code, err) = refused(&all);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert!(!tmp.db().exists(), "a refused start created the store");
    let made: Vec<_> = std::fs::read_dir(&agent_dir).unwrap().collect();
    assert!(made.is_empty(), "a refused start made {made:?}");
    // An agent directory that does not exist is not created (1: it cannot start).
    let (code, err) = refused(&[
        "--db",
        db.as_str(),
        "--broker",
        "--agent-dir",
        "/nonexistent/x",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("/nonexistent"), "{err}");
    // A port in use is a failure to start (1), not a usage error.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().to_string();
    let (code, err) = refused(&["--db", db.as_str(), "--listen", port.as_str()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cannot listen"), "{err}");
}

/// Runs `agent-intercom` with `dir` as its keys directory.
fn with_keys(dir: &Path, args: &[&str]) -> std::process::Output {
    bin()
        .env("AGENT_INTERCOM_KEYS_DIR", dir)
        .env_remove("AGENT_INTERCOM_AGENT_ID")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_pack_send_handoff_lands_and_is_read_through_pad() {
    let tmp = Tmp::new("cli-handoff");
    let (peer, service) = (tmp.0.join("peer-keys"), tmp.0.join("service-keys"));
    for id in ["alpha", "stranger"] {
        let out = with_keys(
            &peer,
            &["keys", "generate", "--kind", "ed25519", "--id", id],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let public = with_keys(&peer, &["keys", "export-public", "--id", "alpha"]);
    let file = tmp.0.join("alpha.pub");
    std::fs::write(&file, &public.stdout).unwrap();
    let file = file.display().to_string();
    let imported = with_keys(
        &service,
        &["keys", "import", "--id", "alpha", "--public", &file],
    );
    assert!(imported.status.success());
    let service_dir = service.display().to_string();
    let (mut child, addr) = serve(&tmp.db(), &["--keys", &service_dir]);
    let payload = tmp.0.join("payload.json");
    std::fs::write(
        &payload,
        r#"{"content":"please review","privacy":"private"}"#,
    )
    .unwrap();
    let payload = payload.display().to_string();
    let url = format!("http://{addr}");
    let send = |key: &str| {
        with_keys(
            &peer,
            &[
                "pack",
                "send",
                "--key",
                key,
                "--content-type",
                "a2a_message",
                "--payload",
                &payload,
                "--recipient",
                "bob",
                "--to",
                &url,
            ],
        )
    };
    let sent = send("alpha");
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    let landed: Value = serde_json::from_slice(&sent.stdout).unwrap();
    let unread = pad(&tmp.db(), "unread", json!({"agent": "bob"}));
    assert_eq!(unread.as_array().unwrap().len(), 1);
    assert_eq!(unread[0]["id"], landed["message"]["id"]);
    assert_eq!(unread[0]["from"], "alpha");
    assert_eq!(unread[0]["content"], "please review");
    // A key the service never enrolled: refused with its code, nothing landed.
    let stranger = send("stranger");
    assert_eq!(stranger.status.code(), Some(1));
    let err = String::from_utf8_lossy(&stranger.stderr);
    assert!(
        err.contains("401") && err.contains("UNKNOWN_SIGNING_KEY"),
        "{err}"
    );
    assert_eq!(pad(&tmp.db(), "unread", json!({"agent": "bob"})), json!([]));
    signal(&child, libc::SIGTERM);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// The process's defaults: a body over the limit, sent whole after the refusal has begun, gets
/// its 413 to a clean end on every POST route; valid JSON with an id out of range is `-32600`
/// with a null id, not a parse error; and the process still stops gracefully.
#[test]
fn the_process_answers_an_oversized_body_and_an_id_out_of_range() {
    let tmp = Tmp::new("cli-refusals");
    let (mut child, addr) = serve(&tmp.db(), &[]);
    for (path, version, size) in [
        ("/a2a", "A2A-Version: 1.0\r\n", 1_100_000),
        ("/a2a", "", 1_100_000),
        ("/v1/a2a/handoff", "", 2_300_000),
    ] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             {version}Content-Length: {size}\r\n\r\n"
        );
        let reply = client::send_after_answer(addr, head.as_bytes(), &vec![b' '; size]);
        assert_eq!(reply.status, 413, "{path} {version:?}");
        assert_eq!(reply.json()["error"]["code"], "ENVELOPE_TOO_LARGE");
    }
    for (version, method) in [("1.0", "GetTask"), ("", "tasks/get")] {
        let mut headers = vec![("Content-Type", "application/json")];
        if !version.is_empty() {
            headers.push(("A2A-Version", version));
        }
        let body = format!(r#"{{"jsonrpc":"2.0","id":1e400,"method":"{method}"}}"#);
        let reply = client::request(addr, "POST", "/a2a", &headers, body.as_bytes());
        let v = reply.json();
        assert_eq!(v["error"]["code"], -32600, "{v}");
        assert_eq!(v["id"], Value::Null);
        let body = br#"{"jsonrpc":"2.0","id":1e400,"method":"#;
        let reply = client::request(addr, "POST", "/a2a", &headers, body);
        assert_eq!(reply.json()["error"]["code"], -32700);
    }
    signal(&child, libc::SIGTERM);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
