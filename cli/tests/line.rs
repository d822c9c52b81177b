//! `agent-intercom line` as real processes on real SQLite files (docs/line.md): the host
//! commands, the session's startup gate in its order, one control process, one answer per
//! input line, and a byte scan of everything written for the secrets. Tests are named by the
//! requirement (L-NN) they prove.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use base64::Engine;
use serde_json::{Value, json};

const PEER: &str = "00000000-0000-4000-8000-000000000002";
const WORKLOAD: &str = "00000000-0000-4000-8000-000000000001";
const CREDENTIAL: &str = "cli-operator-credential-ABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789";
const SEED: [u8; 32] = [0x5a; 32];

struct Lab {
    dir: PathBuf,
    db: PathBuf,
    credential: PathBuf,
    key: PathBuf,
    config: PathBuf,
    /// Everything every process printed, for the byte scan.
    printed: std::cell::RefCell<Vec<u8>>,
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim()).unwrap_or(Value::Null)
    }
    /// The refusal on stderr, `agent-intercom: error[CODE]: detail`, as
    /// `{"error": CODE, "detail": detail}`.
    fn error(&self) -> Value {
        refusal(&self.stderr)
    }
}

/// A refusal in the CLI's one format, `agent-intercom: error[CODE]: detail[; {members}]`, as
/// `{"error": CODE, "detail": detail, ...members}` (null when stderr is not exactly one such
/// line).
fn refusal(stderr: &str) -> Value {
    let parsed = stderr
        .strip_suffix('\n')
        .filter(|line| !line.contains('\n'))
        .and_then(|line| line.strip_prefix("agent-intercom: error["))
        .and_then(|rest| rest.split_once("]: "));
    let Some((code, message)) = parsed else {
        return Value::Null;
    };
    let (detail, members) = match message.split_once("; {") {
        Some((detail, rest)) => (detail, serde_json::from_str(&format!("{{{rest}")).unwrap()),
        None => (message, json!({})),
    };
    let mut out = json!({"error": code, "detail": detail});
    for (name, value) in members.as_object().unwrap() {
        out[name] = value.clone();
    }
    out
}

fn pkcs8_pem(seed: &[u8; 32]) -> String {
    let mut der = vec![
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    der.extend_from_slice(seed);
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    format!("-----BEGIN PRIVATE KEY-----\n{b64}\n-----END PRIVATE KEY-----\n")
}

fn policy(generation: u64) -> Value {
    json!({
        "generation": generation,
        "actions": ["enroll", "classify_public", "submit", "poll", "cancel", "read", "rotate",
                    "revoke"],
        "purposes": ["public-summary"],
        "categories": ["public-task"],
        "task_schemas": ["public-text@1"],
        "peers": [PEER],
        "endpoints": ["https://peer.example:443/a2a/jsonrpc"],
        "limits": {
            "host": {"uses": 10, "application_bytes": 100000, "network_bytes": 5242880},
            "purpose": {"uses": 10, "application_bytes": 100000, "network_bytes": 5242880},
            "peer": {"uses": 10, "application_bytes": 100000, "network_bytes": 5242880},
            "task": {"uses": 10, "application_bytes": 100000, "network_bytes": 5242880},
        },
        "declaration_seconds": 600,
        "task_seconds": 3600,
        "network_seconds": 30,
    })
}

impl Lab {
    fn new(name: &str) -> Lab {
        let dir = std::env::temp_dir().join(format!("aic-linecli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let lab = Lab {
            db: dir.join("line.sqlite"),
            credential: dir.join("operator.credential"),
            key: dir.join("workload.pem"),
            config: dir.join("public-config.json"),
            dir,
            printed: Default::default(),
        };
        lab.secret(&lab.credential, format!("{CREDENTIAL}\n").as_bytes());
        lab.secret(&lab.key, pkcs8_pem(&SEED).as_bytes());
        lab.write_config(&json!({
            "workload_id": WORKLOAD, "signing_key_id": "workload-1", "policy": policy(1)
        }));
        lab
    }

    fn secret(&self, path: &Path, bytes: &[u8]) {
        std::fs::write(path, bytes).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    fn write_config(&self, config: &Value) {
        std::fs::write(&self.config, config.to_string()).unwrap();
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_agent-intercom"));
        c.args(args)
            .env("AGENT_INTERCOM_LINE_DATABASE", &self.db)
            .env("AGENT_INTERCOM_LINE_SIGNING_KEY_FILE", &self.key)
            .env(
                "AGENT_INTERCOM_LINE_OPERATOR_CREDENTIAL_FILE",
                &self.credential,
            )
            .env_remove("AGENT_INTERCOM_LINE_FAULT")
            .env_remove("AGENT_INTERCOM_LINE_TEST_NOW");
        c
    }

    fn run_with(&self, mut command: Command, stdin: &[u8]) -> Out {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        let out = child.wait_with_output().unwrap();
        self.printed.borrow_mut().extend_from_slice(&out.stdout);
        self.printed.borrow_mut().extend_from_slice(&out.stderr);
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn run(&self, args: &[&str], stdin: &[u8]) -> Out {
        self.run_with(self.command(args), stdin)
    }

    fn db_arg(&self) -> &str {
        self.db.to_str().unwrap()
    }

    fn config_arg(&self) -> &str {
        self.config.to_str().unwrap()
    }

    /// Migrated, credential set, generation 1 established.
    fn ready(&self) {
        assert_eq!(
            self.run(&["line", "host", "migrate", "--db", self.db_arg()], b"")
                .code,
            0
        );
        let out = self.run(
            &[
                "line",
                "host",
                "set-operator-credential",
                "--db",
                self.db_arg(),
            ],
            b"",
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        self.establish();
    }

    fn establish(&self) -> Out {
        let out = self.run(
            &[
                "line",
                "host",
                "establish-policy",
                "--db",
                self.db_arg(),
                "--config",
                self.config_arg(),
            ],
            b"",
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        out
    }

    fn session(&self) -> Out {
        self.run(&["line", "session", "--config", self.config_arg()], b"")
    }

    /// A live session: its ready line read, stdin and stdout kept.
    fn live(&self) -> Live {
        let mut child = self
            .command(&["line", "session", "--config", self.config_arg()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut ready = String::new();
        stdout.read_line(&mut ready).unwrap();
        self.printed
            .borrow_mut()
            .extend_from_slice(ready.as_bytes());
        Live {
            child,
            stdin: Some(stdin),
            stdout,
            ready: serde_json::from_str(&ready).unwrap(),
        }
    }

    fn db_bytes(&self) -> Vec<u8> {
        std::fs::read(&self.db).unwrap_or_default()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

struct Live {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    ready: Value,
}

impl Live {
    fn ask(&mut self, line: &str) -> Value {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).unwrap();
        serde_json::from_str(&answer).unwrap()
    }

    fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        self.child.wait().unwrap().code().unwrap_or(-1)
    }
}

#[test]
fn line_answers_help() {
    let lab = Lab::new("help");
    for args in [
        &["line", "--help"][..],
        &["help", "line"],
        &["line", "host", "migrate", "-h"],
    ] {
        let out = lab.run(args, b"");
        assert_eq!(out.code, 0, "{args:?}");
        assert!(out.stdout.contains("agent-intercom line"), "{args:?}");
    }
    let out = lab.run(&["line", "host", "migrate", "-h"], b"");
    assert!(out.stdout.contains("--db <ABS>"), "{}", out.stdout);
    // A usage error is the one format too, with clap's suggestion after it.
    let out = lab.run(&["line", "sesion"], b"");
    assert_eq!(out.code, 2);
    let first = out.stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("agent-intercom: error[UNKNOWN_KEY]: "),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("'session'"), "{}", out.stderr);
}

#[test]
fn r65_cli_migration_gate() {
    let lab = Lab::new("r65");
    // A session on no database: migration required, stdout empty, nothing created.
    let out = lab.session();
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (1, json!("migration_required"))
    );
    assert!(out.stdout.is_empty());
    assert!(!lab.db.exists());
    let out = lab.run(&["line", "host", "migrate", "--db", "line.sqlite"], b"");
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("not_absolute"))
    );
    let out = lab.run(&["line", "host", "migrate", "--db", lab.db_arg()], b"");
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The default is the newest revision: the native lab's, which the session also runs on.
    assert_eq!(out.json(), json!({"ok": true, "from": 0, "revision": 2}));
    // Migrated, but no credential yet.
    let out = lab.session();
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("credential_not_set"))
    );
    let out = lab.run(
        &["line", "host", "migrate", "--db", lab.db_arg(), "--to", "9"],
        b"",
    );
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("usage"))
    );
}

#[test]
fn r67_cli_downgrade_refused_while_rows_remain() {
    let lab = Lab::new("r67");
    assert_eq!(
        lab.run(&["line", "host", "migrate", "--db", lab.db_arg()], b"")
            .code,
        0
    );
    let down = ["line", "host", "migrate", "--db", lab.db_arg(), "--to", "0"];
    assert_eq!(
        lab.run(&down, b"").json(),
        json!({"ok": true, "from": 2, "revision": 0})
    );
    lab.ready();
    let before = lab.db_bytes();
    let out = lab.run(&down, b"");
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (1, json!("downgrade_refused"))
    );
    assert_eq!(lab.db_bytes(), before, "nothing changed");
}

#[test]
fn r02_operator_credential_checked_before_input() {
    let lab = Lab::new("r02");
    lab.ready();
    let before = lab.db_bytes();
    // Another credential: refused with exit 5 while stdin stays open and unread.
    lab.secret(
        &lab.credential,
        b"another-operator-credential-that-the-host-never-set\n",
    );
    let mut child = lab
        .command(&["line", "session", "--config", lab.config_arg()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "no ready line, no answer");
    let error = refusal(&String::from_utf8_lossy(&out.stderr));
    assert_eq!(error["error"], "credential_rejected");
    assert_eq!(lab.db_bytes(), before, "a refused startup writes nothing");
    // The credential is checked before the configuration is even read.
    std::fs::write(&lab.config, "not json").unwrap();
    let out = lab.session();
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("credential_rejected"))
    );
    // The right credential, a broken configuration: now the configuration's refusal.
    lab.secret(&lab.credential, format!("{CREDENTIAL}\n").as_bytes());
    let out = lab.session();
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("config_invalid"))
    );
    assert_eq!(lab.db_bytes(), before);
}

#[test]
fn r01_cli_identity_conflation_and_missing_identities() {
    let lab = Lab::new("r01");
    lab.ready();
    let mut c = lab.command(&["line", "session", "--config", lab.config_arg()]);
    c.env("AGENT_INTERCOM_LINE_OPERATOR_CREDENTIAL_FILE", &lab.key);
    let out = lab.run_with(c, b"");
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("identity_conflation"))
    );
    let mut c = lab.command(&["line", "session", "--config", lab.config_arg()]);
    c.env_remove("AGENT_INTERCOM_LINE_SIGNING_KEY_FILE");
    let out = lab.run_with(c, b"");
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("signing_key_missing"))
    );
    let mut c = lab.command(&["line", "session", "--config", lab.config_arg()]);
    c.env_remove("AGENT_INTERCOM_LINE_OPERATOR_CREDENTIAL_FILE");
    let out = lab.run_with(c, b"");
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("credential_missing"))
    );
}

#[test]
fn r03_cli_relative_or_wrong_kind_key_refuses() {
    let lab = Lab::new("r03");
    lab.ready();
    let mut c = lab.command(&["line", "session", "--config", lab.config_arg()]);
    c.env("AGENT_INTERCOM_LINE_SIGNING_KEY_FILE", "workload.pem");
    let out = lab.run_with(c, b"");
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("not_absolute"))
    );
    lab.secret(
        &lab.key,
        b"-----BEGIN RSA PRIVATE KEY-----\nMAMCAQA=\n-----END RSA PRIVATE KEY-----\n",
    );
    let out = lab.session();
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("signing_key_invalid"))
    );
}

#[test]
fn r04_cli_config_exact_members_and_absolute_path() {
    let lab = Lab::new("r04");
    lab.ready();
    let out = lab.run(&["line", "session", "--config", "public-config.json"], b"");
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("not_absolute"))
    );
    lab.write_config(&json!({
        "workload_id": WORKLOAD, "signing_key_id": "workload-1", "policy": policy(1),
        "database_url": "sqlite:///elsewhere"
    }));
    let out = lab.session();
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("config_invalid"))
    );
    assert_eq!(out.error()["field"], "$.database_url");
}

#[test]
fn r25_cli_generation_must_be_durably_established() {
    let lab = Lab::new("r25");
    lab.ready();
    let config = |p: Value| json!({"workload_id": WORKLOAD, "signing_key_id": "w", "policy": p});
    lab.write_config(&config(policy(2)));
    let out = lab.session();
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("policy_not_established"))
    );
    let mut changed = policy(1);
    changed["categories"] = json!(["public-task", "more"]);
    lab.write_config(&config(changed));
    let out = lab.session();
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("policy_mismatch"))
    );
    lab.write_config(&config(policy(2)));
    lab.establish();
    lab.write_config(&config(policy(1)));
    let out = lab.session();
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("stale_generation"))
    );
    lab.write_config(&config(policy(2)));
    let live = lab.live();
    assert_eq!(live.ready["generation"], 2);
    assert_eq!(live.finish(), 0);
}

#[test]
fn r34_cli_changed_ceiling_refuses() {
    let lab = Lab::new("r34");
    lab.ready();
    let mut p = policy(2);
    p["limits"]["peer"]["uses"] = json!(11);
    lab.write_config(&json!({"workload_id": WORKLOAD, "signing_key_id": "w", "policy": p}));
    let out = lab.run(
        &[
            "line",
            "host",
            "establish-policy",
            "--db",
            lab.db_arg(),
            "--config",
            lab.config_arg(),
        ],
        b"",
    );
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (2, json!("ceiling_changed"))
    );
    assert_eq!(out.error()["scope"], json!({"kind": "peer", "key": PEER}));
}

#[test]
fn r36_one_answer_per_line_in_order() {
    let lab = Lab::new("r36");
    lab.ready();
    let input = "[1]\n{\n{\"a\":1,\"a\":2}\n\u{1}\n{\"operation\":7}\n{\"operation\":\"poll\"}\n\n";
    let out = lab.run(
        &["line", "session", "--config", lab.config_arg()],
        input.as_bytes(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines.len(),
        8,
        "the ready line and one answer per input line"
    );
    assert_eq!(lines[0]["ready"], true);
    assert_eq!(lines[0]["profile"], "outbound-public-text@1");
    assert_eq!(lines[0]["workload_id"], WORKLOAD);
    assert_eq!(lines[0]["generation"], 1);
    for (i, line) in lines[1..5].iter().enumerate() {
        assert_eq!(line["error"], "malformed", "line {i}");
    }
    assert_eq!(lines[5]["error"], "malformed");
    assert_eq!(lines[5]["field"], "operation");
    assert_eq!(lines[6]["operation"], "poll");
    assert_eq!(lines[6]["error"], "invalid_field");
    assert_eq!(
        lines[7]["error"], "malformed",
        "an empty line is not an object"
    );
}

#[test]
fn r27_no_policy_update_migrate_or_reset_in_the_session() {
    let lab = Lab::new("r27");
    lab.ready();
    let mut live = lab.live();
    for op in [
        "update-policy",
        "establish-policy",
        "migrate",
        "reset",
        "delete",
        "refund",
    ] {
        let answer = live.ask(&json!({"operation": op}).to_string());
        assert_eq!(answer["error"], "unknown_operation", "{op}");
        assert_eq!(answer["operation"], op);
    }
    assert_eq!(live.finish(), 0);
}

#[test]
fn r26_cli_newer_generation_invalidates_the_live_session() {
    let lab = Lab::new("r26");
    lab.ready();
    let mut live = lab.live();
    assert_eq!(
        live.ask(r#"{"operation":"poll"}"#)["error"],
        "invalid_field"
    );
    // The host establishes generation 2 while the session runs.
    lab.write_config(&json!({"workload_id": WORKLOAD, "signing_key_id": "w", "policy": policy(2)}));
    lab.establish();
    let answer = live.ask(r#"{"operation":"poll"}"#);
    assert_eq!(answer["error"], "stale_generation");
    assert_eq!(answer["generation"], 2);
    assert_eq!(live.finish(), 0);
}

#[test]
fn r69_cli_one_control_process() {
    let lab = Lab::new("r69");
    lab.ready();
    let live = lab.live();
    let out = lab.session();
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (1, json!("session_busy"))
    );
    let out = lab.run(
        &["line", "host", "migrate", "--db", lab.db_arg(), "--to", "0"],
        b"",
    );
    assert_eq!(
        (out.code, out.error()["error"].clone()),
        (1, json!("session_busy"))
    );
    assert_eq!(live.finish(), 0);
    // Once the first ends, the database is free.
    let live = lab.live();
    assert_eq!(live.ready["ready"], true);
    assert_eq!(live.finish(), 0);
}

#[test]
fn r07_the_session_listens_on_nothing() {
    let lab = Lab::new("r07");
    lab.ready();
    let live = lab.live();
    // Every descriptor of the running session: none is a socket (no listener, no client).
    let fds = std::fs::read_dir(format!("/proc/{}/fd", live.child.id())).unwrap();
    let mut seen = 0;
    for fd in fds {
        let target = std::fs::read_link(fd.unwrap().path()).unwrap_or_default();
        assert!(
            !target.to_string_lossy().starts_with("socket:"),
            "{target:?}"
        );
        seen += 1;
    }
    assert!(seen >= 3, "stdin, stdout, stderr at least");
    assert_eq!(live.finish(), 0);
}

#[test]
fn fault_variables_refused_without_fault_injection() {
    let lab = Lab::new("faultvars");
    lab.ready();
    for var in ["AGENT_INTERCOM_LINE_FAULT", "AGENT_INTERCOM_LINE_TEST_NOW"] {
        let mut c = lab.command(&["line", "host", "migrate", "--db", lab.db_arg()]);
        c.env(var, "1");
        let out = lab.run_with(c, b"");
        assert_eq!(out.error()["error"], "fault_injection_unavailable", "{var}");
        let mut c = lab.command(&["line", "session", "--config", lab.config_arg()]);
        c.env(var, "ledger-commit:abort");
        let out = lab.run_with(c, b"");
        assert_eq!(out.code, 2, "{var}");
        assert_eq!(out.error()["error"], "fault_injection_unavailable");
    }
}

/// The byte forms a secret could leak in.
fn forms(secret: &[u8]) -> Vec<Vec<u8>> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    vec![
        secret.to_vec(),
        b64.encode(secret).into_bytes(),
        url.encode(secret).into_bytes(),
        hex.clone().into_bytes(),
        hex.to_uppercase().into_bytes(),
    ]
}

#[test]
fn r05_no_secret_in_output_or_database() {
    let lab = Lab::new("r05");
    lab.ready();
    let mut live = lab.live();
    for line in [r#"{"operation":"poll"}"#, "[1]", r#"{"operation":"reset"}"#] {
        let answer = live.ask(line);
        lab.printed
            .borrow_mut()
            .extend(answer.to_string().into_bytes());
    }
    lab.printed
        .borrow_mut()
        .extend(live.ready.to_string().into_bytes());
    assert_eq!(live.finish(), 0);
    // Refusals too: conflation, a wrong credential, a readable key.
    let mut c = lab.command(&["line", "session", "--config", lab.config_arg()]);
    c.env("AGENT_INTERCOM_LINE_OPERATOR_CREDENTIAL_FILE", &lab.key);
    lab.run_with(c, b"");
    std::fs::set_permissions(&lab.key, std::fs::Permissions::from_mode(0o644)).unwrap();
    lab.session();
    lab.secret(&lab.key, pkcs8_pem(&SEED).as_bytes());
    let mut stored = lab.db_bytes();
    for entry in std::fs::read_dir(&lab.dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("line.sqlite") {
            stored.extend(std::fs::read(&path).unwrap());
        }
    }
    let pem = pkcs8_pem(&SEED);
    let der_b64 = pem.lines().nth(1).unwrap().as_bytes().to_vec();
    let mut needles = forms(CREDENTIAL.as_bytes());
    needles.extend(forms(&SEED));
    needles.push(der_b64);
    let printed = lab.printed.borrow().clone();
    assert!(!printed.is_empty() && stored.len() > 4096);
    for needle in &needles {
        for (what, hay) in [("output", &printed), ("database", &stored)] {
            assert!(
                !hay.windows(needle.len()).any(|w| w == needle.as_slice()),
                "{what} holds a form of a secret"
            );
        }
    }
}

fn peer_key(key_id: &str, seed: u8) -> Value {
    let public = agent_intercom_core::httpsig::SigningKey::from_seed(&[seed; 32])
        .unwrap()
        .public_key()
        .to_bytes();
    let mut der = vec![
        0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
    ];
    der.extend_from_slice(&public);
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    json!({
        "key_id": key_id,
        "public_key_pem": format!("-----BEGIN PUBLIC KEY-----\n{b64}\n-----END PUBLIC KEY-----\n"),
        "issuer": PEER,
        "protocol": "rfc9421-ed25519@1",
        "audience": WORKLOAD,
        "assurance": "operator-enrolled",
        "valid_from": "2020-01-01T00:00:00+02:00",
        "expires_at": "2099-01-01T00:00:00Z",
    })
}

fn target_line(operation: &str) -> Value {
    json!({
        "operation": operation,
        "peer_id": PEER,
        "purpose": "public-summary",
        "task_schema": "public-text@1",
        "endpoint": "https://peer.example:443/a2a/jsonrpc",
    })
}

#[test]
fn r10_r14_r15_r60_r62_cli_enroll_rotate_revoke_in_a_session() {
    let lab = Lab::new("enroll");
    lab.ready();
    let b64 = base64::engine::general_purpose::STANDARD.encode([0x30u8; 64]);
    let ca = lab.dir.join("ca.pem");
    std::fs::write(
        &ca,
        format!("-----BEGIN CERTIFICATE-----\n{b64}\n-----END CERTIFICATE-----\n"),
    )
    .unwrap();
    let enroll = json!({
        "operation": "enroll",
        "peer_id": PEER,
        "purpose": "public-summary",
        "task_schema": "public-text@1",
        "key": peer_key("peer-key-1", 7),
        "endpoint": {"address": "127.0.0.1", "hostname": "peer.example", "port": 443,
                     "path": "/a2a/jsonrpc", "ca_file": ca.to_str().unwrap()},
    });
    let mut live = lab.live();
    let mut extra = enroll.clone();
    extra["extra"] = json!(1);
    let answer = live.ask(&extra.to_string());
    assert_eq!(
        (answer["error"].clone(), answer["field"].clone()),
        (json!("invalid_field"), json!("extra"))
    );
    let answer = live.ask(&enroll.to_string());
    assert_eq!(answer["operation"], "enroll", "{answer}");
    assert_eq!(answer["category"], "public-task");
    assert_eq!(answer["endpoint"], "https://peer.example:443/a2a/jsonrpc");
    assert_eq!(
        (answer["key_id"].clone(), answer["key_version"].clone()),
        (json!("peer-key-1"), json!(1))
    );
    assert_eq!(live.finish(), 0);
    // Durable across a restart: the identity is immutable.
    let mut live = lab.live();
    let mut other = enroll.clone();
    other["key"] = peer_key("peer-key-2", 8);
    assert_eq!(live.ask(&other.to_string())["error"], "already_enrolled");
    assert_eq!(live.finish(), 0);
    // A new workload key under the same signing_key_id cannot reuse the enrollment.
    lab.secret(&lab.key, pkcs8_pem(&[0x6b; 32]).as_bytes());
    let mut rotate = target_line("rotate");
    rotate["key"] = peer_key("peer-key-2", 8);
    let mut live = lab.live();
    assert_eq!(
        live.ask(&rotate.to_string())["error"],
        "workload_key_changed"
    );
    assert_eq!(live.finish(), 0);
    lab.secret(&lab.key, pkcs8_pem(&SEED).as_bytes());
    let mut live = lab.live();
    let answer = live.ask(&rotate.to_string());
    assert_eq!(
        answer,
        json!({"operation": "rotate", "peer_id": PEER, "retired_key_id": "peer-key-1",
               "key_id": "peer-key-2", "key_version": 2})
    );
    let answer = live.ask(&target_line("revoke").to_string());
    assert_eq!(
        answer,
        json!({"operation": "revoke", "peer_id": PEER, "revoked": true})
    );
    assert_eq!(live.finish(), 0);
    let mut live = lab.live();
    rotate["key"] = peer_key("peer-key-3", 9);
    assert_eq!(live.ask(&rotate.to_string())["error"], "revoked");
    assert_eq!(live.finish(), 0);
    // No secret reached the output or the database.
    let db = lab.db_bytes();
    let printed = lab.printed.borrow().clone();
    for needle in forms(&SEED)
        .iter()
        .chain(forms(CREDENTIAL.as_bytes()).iter())
    {
        for hay in [&db, &printed] {
            assert!(!hay.windows(needle.len()).any(|w| w == needle.as_slice()));
        }
    }
}
