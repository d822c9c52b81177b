//! The broker as a process: signals, kill -9 and restart, concurrent starts, a connection flood.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agent_intercom_broker::client::RawClient;
use serde_json::{Value, json};

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("aicp-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }
    fn intercom(&self) -> PathBuf {
        self.0.join("intercom")
    }
    fn socket(&self) -> PathBuf {
        self.intercom().join("broker.sock")
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn broker(dir: &Dir, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_agent-intercom"))
        .args(["broker", "--agent-dir"])
        .arg(&dir.0)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Sends `sig` to a process of this test.
fn signal(pid: i32, sig: i32) {
    // SAFETY: kill has no memory preconditions.
    unsafe { libc::kill(pid, sig) };
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

fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "process did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn expect(client: &mut RawClient, kind: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match client.recv(left).unwrap() {
            Some(v) if v["type"] == kind => return v,
            Some(_) => continue,
            None => panic!("no {kind}"),
        }
    }
}

fn register(socket: &Path, id: &str, runtime: &str) -> RawClient {
    let mut c = RawClient::connect(socket).unwrap();
    c.send(&json!({
        "type": "register",
        "protocol": "pi-intercom",
        "version": 4,
        "sessionId": id,
        "scopeId": "Scope_AAAAAAAAAA",
        "session": {
            "cwd": "/w",
            "model": "m",
            "pid": 1,
            "startedAt": 1,
            "lastActivity": 1,
            "runtimeInstanceId": runtime,
        },
    }))
    .unwrap();
    assert_eq!(expect(&mut c, "registered")["sessionId"], id);
    c
}

#[test]
fn sigterm_shuts_down_cleanly_removing_only_its_files() {
    let dir = Dir::new("term");
    let mut child = broker(&dir, &["--idle-exit", "0"]);
    wait_healthy(&dir.socket());
    let _client = register(&dir.socket(), "s1", "r1");
    signal(child.id() as i32, libc::SIGTERM);
    assert!(wait_exit(&mut child, Duration::from_secs(5)).success());
    let left: Vec<String> = std::fs::read_dir(dir.intercom())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // What stays is state: the store, the access registry, the admin token and the audit log.
    let state = |f: &String| {
        f.starts_with("broker-state.sqlite")
            || [
                "broker-access.json",
                "broker-admin.json",
                "broker-audit.jsonl",
            ]
            .contains(&f.as_str())
    };
    assert!(left.iter().all(state), "left behind: {left:?}");
}

/// The first line of `child`'s stdout (within 10 s).
fn first_line(child: &mut Child) -> String {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = std::io::BufReader::new(stdout);
        let mut line = String::new();
        let _ = std::io::BufRead::read_line(&mut reader, &mut line);
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut reader, &mut rest);
        let _ = tx.send((line, rest));
    });
    let (line, rest) = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a line on stdout");
    assert_eq!(rest, "", "nothing else on stdout");
    line
}

#[test]
fn the_start_line_is_printed_once_the_broker_listens() {
    let dir = Dir::new("line");
    let mut child = broker(&dir, &["--idle-exit", "0"]);
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = std::io::BufReader::new(stdout);
        loop {
            let mut line = String::new();
            match std::io::BufRead::read_line(&mut reader, &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let line = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the start line");
    // Exactly the Pi adapter's broker's line, with this process's pid.
    assert_eq!(
        line,
        format!(
            "Intercom broker started (pid: {}, remote-access-v1)\n",
            child.id()
        )
    );
    // Printed once it listens: it answers at once, and broker.pid is written.
    assert_eq!(
        agent_intercom_broker::health(&dir.socket(), Duration::from_secs(5)),
        agent_intercom_broker::Health::Compatible
    );
    let pid = std::fs::read_to_string(dir.intercom().join("broker.pid")).unwrap();
    assert_eq!(pid.trim(), child.id().to_string());
    // A second start finds it running and says so instead.
    let mut second = broker(&dir, &["--idle-exit", "0"]);
    let said = first_line(&mut second);
    assert!(said.starts_with("a broker is already running"), "{said}");
    assert!(wait_exit(&mut second, Duration::from_secs(10)).success());
    signal(child.id() as i32, libc::SIGTERM);
    assert!(wait_exit(&mut child, Duration::from_secs(5)).success());
    // Nothing more on stdout: the logging stays on stderr.
    assert!(rx.recv_timeout(Duration::from_secs(5)).is_err());
}

#[test]
fn killed_mid_ask_then_restarted_the_edge_survives_and_the_reply_threads() {
    let dir = Dir::new("kill9");
    let mut child = broker(&dir, &["--idle-exit", "0"]);
    wait_healthy(&dir.socket());
    let mut asker = register(&dir.socket(), "asker", "ra");
    let mut asked = register(&dir.socket(), "asked", "rb");
    asker
        .send(&json!({
            "type": "send",
            "to": "asked",
            "message": {
                "id": "q1",
                "timestamp": 1,
                "expectsReply": true,
                "content": { "text": "?" },
            },
        }))
        .unwrap();
    let m = expect(&mut asked, "message");
    asked
        .send(&json!({ "type": "message_received", "deliveryId": m["deliveryId"] }))
        .unwrap();
    expect(&mut asker, "delivered");
    signal(child.id() as i32, libc::SIGKILL);
    wait_exit(&mut child, Duration::from_secs(5));
    assert!(dir.socket().exists(), "a killed broker leaves its socket");
    let mut child = broker(&dir, &["--idle-exit", "0"]);
    wait_healthy(&dir.socket());
    let mut asker = register(&dir.socket(), "asker", "ra2");
    let mut asked = register(&dir.socket(), "asked", "rb2");
    asked
        .send(&json!({
            "type": "send",
            "to": "asker",
            "message": { "id": "r1", "timestamp": 2, "replyTo": "q1", "content": { "text": "!" } },
        }))
        .unwrap();
    let reply = expect(&mut asker, "message");
    assert_eq!(reply["message"]["replyTo"], "q1");
    asker
        .send(&json!({ "type": "message_received", "deliveryId": reply["deliveryId"] }))
        .unwrap();
    expect(&mut asked, "delivered");
    signal(child.id() as i32, libc::SIGTERM);
    wait_exit(&mut child, Duration::from_secs(5));
}

#[test]
fn eight_concurrent_starts_leave_exactly_one_broker() {
    let dir = Dir::new("race");
    let mut children: Vec<Child> = (0..8)
        .map(|_| broker(&dir, &["--idle-exit", "0"]))
        .collect();
    wait_healthy(&dir.socket());
    std::thread::sleep(Duration::from_millis(300));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let running = children
            .iter_mut()
            .map(|c| c.try_wait().unwrap().is_none())
            .filter(|r| *r)
            .count();
        if running == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "{running} brokers still running");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut used = 0;
    for child in children.iter_mut() {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success());
            let mut out = String::new();
            std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
            assert!(out.contains("already running"), "{out}");
            used += 1;
        }
    }
    assert_eq!(used, 7);
    let owner = children
        .iter_mut()
        .find_map(|c| c.try_wait().unwrap().is_none().then_some(c))
        .unwrap();
    let pid: u32 = std::fs::read_to_string(dir.intercom().join("broker.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(pid, owner.id());
    signal(owner.id() as i32, libc::SIGTERM);
    wait_exit(owner, Duration::from_secs(5));
}

#[test]
fn a_flood_of_connections_is_refused_cleanly_while_a_session_keeps_working() {
    let dir = Dir::new("flood");
    let mut child = broker(
        &dir,
        &["--idle-exit", "0", "--set", "registration_timeout_ms=2000"],
    );
    wait_healthy(&dir.socket());
    let mut a = register(&dir.socket(), "a", "ra");
    let mut b = register(&dir.socket(), "b", "rb");
    let mut flood: Vec<RawClient> = (0..1000)
        .map(|_| RawClient::connect(&dir.socket()).unwrap())
        .collect();
    a.send(&json!({
        "type": "send",
        "to": "b",
        "message": { "id": "during", "timestamp": 1, "content": { "text": "x" } },
    }))
    .unwrap();
    let m = expect(&mut b, "message");
    b.send(&json!({ "type": "message_received", "deliveryId": m["deliveryId"] }))
        .unwrap();
    expect(&mut a, "delivered");
    let mut told = 0;
    for c in flood.iter_mut() {
        if let Some(v) = c.recv(Duration::from_secs(5)).unwrap() {
            assert_eq!(v["type"], "error");
            assert_eq!(v["code"], "INVALID_REQUEST");
            told += 1;
            assert!(
                c.recv(Duration::from_secs(2)).unwrap().is_none(),
                "closed after the error"
            );
        }
    }
    assert_eq!(told, 1000, "every refused connection is told why ({told})");
    signal(child.id() as i32, libc::SIGTERM);
    assert!(wait_exit(&mut child, Duration::from_secs(5)).success());
}

fn run_broker(dir: &Dir, extra: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_agent-intercom"))
        .args(["broker", "--agent-dir"])
        .arg(&dir.0)
        .args(extra)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn settings_out_of_range_are_usage_errors_and_start_nothing() {
    let dir = Dir::new("range");
    for args in [
        &["--idle-exit", "18446744073709551615"][..],
        &["--set", "recent_delivery_ttl_ms=18446744073709551615"],
        &["--set", "max_sessions=0"],
        &["--set", "ask_timeout_ms=1.5"],
        &["--set", "no_such_limit=1"],
    ] {
        let out = run_broker(&dir, args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let key = args[1].split('=').next().unwrap();
        let key = if key == "18446744073709551615" {
            "idle_exit_secs"
        } else {
            key
        };
        assert!(err.contains(key), "{args:?}: {err}");
        let code = if key == "no_such_limit" {
            "UNKNOWN_KEY"
        } else {
            "INVALID_ARGUMENT"
        };
        assert!(err.contains(code), "{args:?}: {err}");
        assert!(
            !dir.intercom().exists(),
            "{args:?} created the intercom directory"
        );
    }
}

#[test]
fn a_failing_broker_thread_exits_non_zero_and_removes_its_files() {
    let dir = Dir::new("fault");
    let out = run_broker(
        &dir,
        &["--idle-exit", "0"],
        &[("AGENT_INTERCOM_FAULT", "broker-panic")],
    );
    assert!(!out.status.success(), "{:?}", out.status);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Failed"), "{err}");
    for name in ["broker.sock", "broker.pid", "broker.owner"] {
        assert!(
            std::fs::symlink_metadata(dir.intercom().join(name)).is_err(),
            "{name} was left behind"
        );
    }
    // And the next broker starts.
    let mut child = broker(&dir, &["--idle-exit", "0"]);
    wait_healthy(&dir.socket());
    signal(child.id() as i32, libc::SIGTERM);
    assert!(wait_exit(&mut child, Duration::from_secs(5)).success());
}

/// The broker's stderr may be a pipe nobody reads, non-blocking as Node makes a child's stdio.
/// Once it is full, what the broker logs is dropped and the broker goes on (it used to panic on
/// the first line that could not be written, and stop).
#[test]
fn a_full_stderr_nobody_reads_never_stops_the_broker() {
    use std::os::fd::OwnedFd;
    let dir = Dir::new("stderr");
    let (_unread, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    // O_NONBLOCK belongs to the open file, which the broker's fd 2 shares.
    theirs.set_nonblocking(true).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-intercom"))
        .args(["broker", "--agent-dir"])
        .arg(&dir.0)
        .args(["--idle-exit", "0", "--log-level", "warn"])
        .args(["--set", "max_unregistered=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::from(OwnedFd::from(theirs)))
        .spawn()
        .unwrap();
    wait_healthy(&dir.socket());
    // Each connection accepted past the one unregistered allowed evicts the oldest, with a line
    // at warn: some 2,000 lines, many times what the socket holds.
    for round in 0..40 {
        let mut batch: Vec<RawClient> = (0..50)
            .map(|_| RawClient::connect(&dir.socket()).unwrap())
            .collect();
        for c in &mut batch[..49] {
            let told = c.recv(Duration::from_secs(5)).unwrap();
            assert!(
                told.is_some_and(|v| v["type"] == "error"),
                "round {round}: evicted with an error frame"
            );
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "round {round}: the broker stopped"
        );
    }
    let mut a = register(&dir.socket(), "a", "ra");
    let mut b = register(&dir.socket(), "b", "rb");
    a.send(&json!({
        "type": "send",
        "to": "b",
        "message": { "id": "after", "timestamp": 1, "content": { "text": "x" } },
    }))
    .unwrap();
    let m = expect(&mut b, "message");
    b.send(&json!({ "type": "message_received", "deliveryId": m["deliveryId"] }))
        .unwrap();
    expect(&mut a, "delivered");
    signal(child.id() as i32, libc::SIGTERM);
    assert!(wait_exit(&mut child, Duration::from_secs(10)).success());
}
