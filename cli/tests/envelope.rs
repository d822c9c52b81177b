//! `agent-intercom keys` and `pack send|receive` as real processes in temporary directories:
//! two "machines" (separate keys directories and stores), every refusal with its code and exit
//! status, file permissions, planted symbolic links, and `--to` against a real HTTP/1.1 peer on
//! loopback that lands what it receives through `handoff::accept`.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use agent_intercom_a2a::keys::KeyDir;
use agent_intercom_core::canonical;
use agent_intercom_core::envelope::{self, ContentType, Fields, Sender};
use serde_json::Value;

struct Tmp(PathBuf);

impl Tmp {
    fn new(name: &str) -> Tmp {
        let dir = std::env::temp_dir().join(format!("aic-envcli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Tmp(dir)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
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
    /// The stable code printed at the end of the error line.
    fn refused(&self, code: &str) -> bool {
        self.stderr
            .contains(&format!("agent-intercom: error[{code}]: "))
    }
}

/// Runs the CLI with `keys` as its keys directory (none: the variable unset) and `stdin`.
fn cli(tmp: &Tmp, keys: &str, args: &[&str], stdin: Option<&[u8]>) -> Out {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-intercom"));
    command
        .args(args)
        .env("AGENT_INTERCOM_KEYS_DIR", tmp.path(keys))
        .env("PI_CODING_AGENT_DIR", tmp.path("agent"))
        .env_remove("AGENT_INTERCOM_SCRATCHPAD")
        .env_remove("AGENT_INTERCOM_AGENT_ID")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.unwrap_or_default().to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Machine A has key `alpha` (Ed25519) and `shared` (HMAC); machine B enrolled both.
fn two_machines(tmp: &Tmp) {
    assert_eq!(
        cli(
            tmp,
            "a",
            &["keys", "generate", "--kind", "ed25519", "--id", "alpha"],
            None
        )
        .code,
        0
    );
    assert_eq!(
        cli(
            tmp,
            "a",
            &["keys", "generate", "--kind", "hmac", "--id", "shared"],
            None
        )
        .code,
        0
    );
    let public = cli(tmp, "a", &["keys", "export-public", "--id", "alpha"], None);
    assert_eq!(public.code, 0, "{}", public.stderr);
    let file = tmp.write("alpha.pub", &public.stdout);
    let imported = cli(
        tmp,
        "b",
        &[
            "keys",
            "import",
            "--id",
            "alpha",
            "--public",
            file.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(imported.code, 0, "{}", imported.stderr);
    // The shared secret travels as its 0600 file.
    let secret = tmp.path("a/shared.hmac.key");
    let copy = tmp.path("shared.secret");
    std::fs::copy(&secret, &copy).unwrap();
    chmod(&copy, 0o600);
    let shared = cli(
        tmp,
        "b",
        &[
            "keys",
            "import",
            "--id",
            "shared",
            "--hmac-secret",
            copy.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(shared.code, 0, "{}", shared.stderr);
}

fn send(tmp: &Tmp, key: &str, content_type: &str, payload: &str, extra: &[&str]) -> Out {
    let file = tmp.write(&format!("payload-{key}-{content_type}.json"), payload);
    let mut args = vec![
        "pack",
        "send",
        "--key",
        key,
        "--content-type",
        content_type,
        "--payload",
    ];
    args.push(file.to_str().unwrap());
    args.extend_from_slice(extra);
    cli(tmp, "a", &args, None)
}

fn receive(tmp: &Tmp, envelope: &[u8]) -> Out {
    let db = tmp.path("b.db");
    cli(
        tmp,
        "b",
        &["pack", "receive", "--db", db.to_str().unwrap()],
        Some(envelope),
    )
}

fn unread(tmp: &Tmp, agent: &str) -> Vec<Value> {
    let db = tmp.path("b.db");
    let out = cli(
        tmp,
        "b",
        &[
            "pad",
            "--db",
            db.to_str().unwrap(),
            "unread",
            &format!("{{\"agent\":\"{agent}\"}}"),
        ],
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.json().as_array().cloned().unwrap_or_default()
}

#[test]
fn keys_are_generated_listed_imported_and_exported_without_secrets() {
    let tmp = Tmp::new("keys");
    two_machines(&tmp);
    assert_eq!(mode(&tmp.path("a")), 0o700);
    assert_eq!(mode(&tmp.path("a/alpha.ed25519.key")), 0o600);
    assert_eq!(mode(&tmp.path("a/shared.hmac.key")), 0o600);
    let secret = std::fs::read_to_string(tmp.path("a/shared.hmac.key")).unwrap();
    let private = std::fs::read_to_string(tmp.path("a/alpha.ed25519.key")).unwrap();
    let body = |pem: &str| pem.lines().nth(1).unwrap().to_string();
    let list = cli(&tmp, "a", &["keys", "list"], None);
    assert_eq!(list.code, 0);
    assert!(
        list.stdout.contains("alpha\ted25519\town\tsha256:"),
        "{}",
        list.stdout
    );
    assert!(
        list.stdout.contains("shared\thmac-sha256\town\t-"),
        "{}",
        list.stdout
    );
    let json = cli(&tmp, "b", &["keys", "list", "--json"], None).json();
    assert_eq!(json[0]["id"], "alpha");
    assert_eq!(json[0]["own"], false);
    let fingerprint = |out: &Out| out.stdout.split("sha256:").nth(1).unwrap()[..64].to_string();
    assert_eq!(
        json[0]["fingerprint"],
        format!("sha256:{}", fingerprint(&list))
    );
    // No output of any command carries a secret.
    for out in [&list, &cli(&tmp, "a", &["keys", "list", "--json"], None)] {
        assert!(!out.stdout.contains(secret.trim()) && !out.stdout.contains(&body(&private)));
    }
    let generated = cli(
        &tmp,
        "a",
        &["keys", "generate", "--kind", "hmac", "--id", "fresh"],
        None,
    );
    let fresh = std::fs::read_to_string(tmp.path("a/fresh.hmac.key")).unwrap();
    assert!(!generated.stdout.contains(fresh.trim()) && !generated.stderr.contains(fresh.trim()));
    // Refusals.
    let again = cli(
        &tmp,
        "a",
        &["keys", "generate", "--kind", "ed25519", "--id", "shared"],
        None,
    );
    assert!(
        again.code == 2 && again.refused("INVALID_ARGUMENT"),
        "{}",
        again.stderr
    );
    let bad_id = cli(
        &tmp,
        "a",
        &["keys", "generate", "--kind", "ed25519", "--id", "../x"],
        None,
    );
    assert!(bad_id.code == 2 && bad_id.refused("INVALID_ARGUMENT"));
    assert_eq!(
        cli(
            &tmp,
            "a",
            &["keys", "generate", "--kind", "rsa", "--id", "x"],
            None
        )
        .code,
        2
    );
    assert_eq!(
        cli(&tmp, "a", &["keys", "generate", "--id", "x"], None).code,
        2
    );
    // A secret is never taken on the command line.
    let inline = cli(
        &tmp,
        "a",
        &["keys", "import", "--id", "x", "--secret", "c2VjcmV0"],
        None,
    );
    assert!(inline.code == 2 && inline.stderr.contains("unexpected argument"));
    let hmac_public = cli(
        &tmp,
        "a",
        &["keys", "export-public", "--id", "shared"],
        None,
    );
    assert!(hmac_public.code == 2 && hmac_public.refused("INVALID_ARGUMENT"));
    let missing = cli(
        &tmp,
        "a",
        &["keys", "export-public", "--id", "nobody"],
        None,
    );
    assert!(missing.code == 2 && missing.refused("NOT_FOUND"));
    let private_file = tmp.path("a/alpha.ed25519.key");
    let as_public = cli(
        &tmp,
        "b",
        &[
            "keys",
            "import",
            "--id",
            "p2",
            "--public",
            private_file.to_str().unwrap(),
        ],
        None,
    );
    assert!(
        as_public.code == 2 && as_public.stderr.contains("private key"),
        "{}",
        as_public.stderr
    );
    let garbage = tmp.write("garbage.pub", "not a key");
    let bad_key = cli(
        &tmp,
        "b",
        &[
            "keys",
            "import",
            "--id",
            "p3",
            "--public",
            garbage.to_str().unwrap(),
        ],
        None,
    );
    assert!(bad_key.code == 2 && bad_key.refused("INVALID_ARGUMENT"));
    // An HMAC secret file readable by others, or a symbolic link to one, is refused.
    let open_secret = tmp.write("open.secret", secret.trim());
    chmod(&open_secret, 0o644);
    let refused = cli(
        &tmp,
        "b",
        &[
            "keys",
            "import",
            "--id",
            "s2",
            "--hmac-secret",
            open_secret.to_str().unwrap(),
        ],
        None,
    );
    assert!(
        refused.code == 1 && refused.refused("STORE_IO") && refused.stderr.contains("chmod 600")
    );
    assert!(!refused.stderr.contains(secret.trim()));
    chmod(&open_secret, 0o600);
    symlink(&open_secret, tmp.path("link.secret")).unwrap();
    let link = tmp.path("link.secret");
    let linked = cli(
        &tmp,
        "b",
        &[
            "keys",
            "import",
            "--id",
            "s3",
            "--hmac-secret",
            link.to_str().unwrap(),
        ],
        None,
    );
    assert!(
        linked.code == 1 && linked.stderr.contains("symbolic link"),
        "{}",
        linked.stderr
    );
    let short = tmp.write("short.secret", "c2hvcnQ=\n");
    chmod(&short, 0o600);
    let weak = cli(
        &tmp,
        "b",
        &[
            "keys",
            "import",
            "--id",
            "s4",
            "--hmac-secret",
            short.to_str().unwrap(),
        ],
        None,
    );
    assert!(
        weak.code == 2 && weak.stderr.contains("at least 32 bytes"),
        "{}",
        weak.stderr
    );
}

#[test]
fn an_envelope_travels_by_file_once() {
    let tmp = Tmp::new("file");
    two_machines(&tmp);
    let payload = r#"{"content":"please review","privacy":"private","priority":"high"}"#;
    let out = tmp.path("env.json");
    let sent = send(
        &tmp,
        "alpha",
        "a2a_message",
        payload,
        &[
            "--recipient",
            "bob",
            "--agent-id",
            "alice",
            "--capability",
            "review",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(sent.code, 0, "{}", sent.stderr);
    assert_eq!(mode(&out), 0o600);
    let text = std::fs::read(&out).unwrap();
    let landed = receive(&tmp, &text);
    assert_eq!(landed.code, 0, "{}", landed.stderr);
    let landed = landed.json();
    assert_eq!(landed["sender"], "alice");
    assert_eq!(landed["key_id"], "alpha");
    let messages = unread(&tmp, "bob");
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["from"], "alice");
    assert_eq!(messages[0]["privacy"], "private");
    assert_eq!(messages[0]["id"], landed["message"]["id"]);
    assert!(unread(&tmp, "carol").is_empty());
    // The same envelope again is a replay.
    let replay = receive(&tmp, &text);
    assert!(
        replay.code == 2 && replay.refused("REPLAYED"),
        "{}",
        replay.stderr
    );
    // An HMAC envelope on stdout, a task.
    let task = send(
        &tmp,
        "shared",
        "a2a_task",
        r#"{"title":"run the suite"}"#,
        &["--recipient", "bob"],
    );
    assert_eq!(task.code, 0, "{}", task.stderr);
    let landed = receive(&tmp, task.stdout.as_bytes());
    assert_eq!(landed.code, 0, "{}", landed.stderr);
    assert_eq!(landed.json()["task"]["state"], "submitted");
    assert_eq!(landed.json()["sender"], "shared");
    let bundle = send(
        &tmp,
        "alpha",
        "handoff_bundle",
        r#"{"content":"where I am","metadata":{"done":[1,2]}}"#,
        &[],
    );
    assert_eq!(
        receive(&tmp, bundle.stdout.as_bytes()).json()["message"]["category"],
        "handoff_bundle"
    );
}

/// An envelope signed by A's key `alpha` with the library (for times `pack send` never makes).
fn crafted(tmp: &Tmp, sent_at_ms: i64, expires_at_ms: i64) -> String {
    let signer = KeyDir::open(&tmp.path("a"))
        .unwrap()
        .signer("alpha")
        .unwrap();
    let fields = Fields {
        sent_at_ms,
        sender: Sender {
            agent_id: "alice".into(),
            agent_type: "t".into(),
            daemon_fingerprint: "f".into(),
            capabilities: vec![],
        },
        recipient: None,
        content_type: ContentType::A2aMessage,
        payload: canonical::Value::Object(vec![(
            "content".into(),
            canonical::Value::String("x".into()),
        )]),
        metadata: vec![],
        nonce: format!("nonce-crafted-{sent_at_ms}"),
        expires_at_ms,
    };
    envelope::sign(&fields, &signer).unwrap()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[test]
fn every_refusal_of_pack_receive_has_its_code_and_lands_nothing() {
    let tmp = Tmp::new("refusals");
    two_machines(&tmp);
    let good = send(
        &tmp,
        "alpha",
        "a2a_message",
        r#"{"content":"original"}"#,
        &[],
    )
    .stdout;
    let refusals: Vec<(&str, Vec<u8>)> = vec![
        (
            "SIGNATURE_INVALID",
            good.replace("original", "forged!!").into_bytes(),
        ),
        (
            "SIGNATURE_INVALID",
            good.replace("\"agent_id\":\"alpha\"", "\"agent_id\":\"admin\"")
                .into_bytes(),
        ),
        (
            "ENVELOPE_MALFORMED",
            good.replacen('{', "{\"extra\":1,", 1).into_bytes(),
        ),
        ("ENVELOPE_MALFORMED", b"not json".to_vec()),
        ("ENVELOPE_MALFORMED", b"\xff\xfe".to_vec()),
        (
            "UNSUPPORTED_FORMAT_VERSION",
            good.replace("\"format_version\":1", "\"format_version\":2")
                .into_bytes(),
        ),
        ("SIGNATURE_MISSING", {
            let at = good.find(",\"signature\"").unwrap();
            format!("{}}}", &good[..at]).into_bytes()
        }),
        (
            "SIGNATURE_MALFORMED",
            good.replace("\"kind\":\"ed25519\"", "\"kind\":\"rsa\"")
                .into_bytes(),
        ),
        (
            "UNKNOWN_SIGNING_KEY",
            good.replace("\"key_id\":\"alpha\"", "\"key_id\":\"nobody\"")
                .into_bytes(),
        ),
        (
            "ENVELOPE_TOO_LARGE",
            format!("{}{}", good.trim_end(), " ".repeat(2 * 1024 * 1024)).into_bytes(),
        ),
        (
            "SIGNATURE_EXPIRED",
            crafted(&tmp, now_ms() - 120_000, now_ms() - 60_000).into_bytes(),
        ),
        (
            "SIGNATURE_NOT_YET_VALID",
            crafted(&tmp, now_ms() + 3_600_000, now_ms() + 3_660_000).into_bytes(),
        ),
    ];
    for (code, input) in &refusals {
        let out = receive(&tmp, input);
        assert!(
            out.code == 2 && out.refused(code),
            "{code}: {} {}",
            out.code,
            out.stderr
        );
        assert!(out.stdout.is_empty());
    }
    assert!(unread(&tmp, "anyone").is_empty());
    // A key only A has is unknown to B.
    cli(
        &tmp,
        "a",
        &["keys", "generate", "--kind", "ed25519", "--id", "secret-a"],
        None,
    );
    let stranger = send(&tmp, "secret-a", "a2a_message", r#"{"content":"x"}"#, &[]);
    assert!(receive(&tmp, stranger.stdout.as_bytes()).refused("UNKNOWN_SIGNING_KEY"));
    // The untampered envelope still lands (no refusal took its nonce).
    assert_eq!(receive(&tmp, good.as_bytes()).code, 0);
    assert_eq!(unread(&tmp, "anyone").len(), 1);
}

#[test]
fn unsafe_key_files_are_refused_and_planted_links_never_followed() {
    let tmp = Tmp::new("unsafe");
    two_machines(&tmp);
    // A secret readable by the group is not used, to sign or to verify.
    chmod(&tmp.path("a/shared.hmac.key"), 0o640);
    let out = send(&tmp, "shared", "a2a_message", r#"{"content":"x"}"#, &[]);
    assert!(
        out.code == 1 && out.refused("STORE_IO") && out.stderr.contains("chmod 600"),
        "{}",
        out.stderr
    );
    let list = cli(&tmp, "a", &["keys", "list"], None);
    assert!(
        list.code == 1 && list.stdout.contains("shared\thmac-sha256\town\tREFUSED"),
        "{}",
        list.stdout
    );
    chmod(&tmp.path("a/shared.hmac.key"), 0o600);
    let good = send(&tmp, "shared", "a2a_message", r#"{"content":"x"}"#, &[]).stdout;
    chmod(&tmp.path("b/shared.hmac.key"), 0o604);
    assert!(receive(&tmp, good.as_bytes()).refused("STORE_IO"));
    chmod(&tmp.path("b/shared.hmac.key"), 0o600);
    // A keys directory open to others is refused.
    chmod(&tmp.path("b"), 0o755);
    let open = receive(&tmp, good.as_bytes());
    assert!(
        open.code == 1 && open.stderr.contains("chmod 700"),
        "{}",
        open.stderr
    );
    chmod(&tmp.path("b"), 0o700);
    // A planted symbolic link in B's directory, to a key of the attacker's choosing.
    cli(
        &tmp,
        "a",
        &["keys", "generate", "--kind", "ed25519", "--id", "mallory"],
        None,
    );
    let pem = cli(
        &tmp,
        "a",
        &["keys", "export-public", "--id", "mallory"],
        None,
    )
    .stdout;
    let planted = tmp.write("planted.pub", &pem);
    symlink(&planted, tmp.path("b/mallory.ed25519.pub")).unwrap();
    let forged = send(&tmp, "mallory", "a2a_message", r#"{"content":"x"}"#, &[]).stdout;
    let out = receive(&tmp, forged.as_bytes());
    assert!(
        out.code == 1 && out.stderr.contains("symbolic link"),
        "{}",
        out.stderr
    );
    // The keys directory itself as a symbolic link.
    std::fs::remove_file(tmp.path("b/mallory.ed25519.pub")).unwrap();
    symlink(tmp.path("b"), tmp.path("b-link")).unwrap();
    let db = tmp.path("b.db");
    let linked = cli(
        &tmp,
        "b-link",
        &["pack", "receive", "--db", db.to_str().unwrap()],
        Some(good.as_bytes()),
    );
    assert!(
        linked.code == 1 && linked.stderr.contains("symbolic link"),
        "{}",
        linked.stderr
    );
    // Nothing landed through any of them; the good one still does.
    assert!(unread(&tmp, "anyone").is_empty());
    assert_eq!(receive(&tmp, good.as_bytes()).code, 0);
}

#[test]
fn pack_send_refuses_bad_requests() {
    let tmp = Tmp::new("send");
    two_machines(&tmp);
    let ok = r#"{"content":"x"}"#;
    let cases: Vec<(Vec<&str>, &str, i32, &str)> = vec![
        (vec![], "a2a_note", 2, "--content-type"),
        (vec!["--expires-in", "0"], "a2a_message", 2, "--expires-in"),
        (
            vec!["--expires-in", "86401"],
            "a2a_message",
            2,
            "--expires-in",
        ),
        (
            vec!["--out", "x", "--to", "http://127.0.0.1:1/"],
            "a2a_message",
            2,
            "cannot be used with",
        ),
        (
            vec!["--to", "https://example.com/"],
            "a2a_message",
            2,
            "[INVALID_ARGUMENT]",
        ),
        (
            vec!["--token-file", "t"],
            "a2a_message",
            2,
            "not provided: --to <URL>",
        ),
        (
            vec!["--recipient", ""],
            "a2a_message",
            2,
            "[ENVELOPE_MALFORMED]",
        ),
        (
            vec!["--capability", "c", "--capability", "c"],
            "a2a_message",
            2,
            "repeats",
        ),
        (
            vec!["--key", "x"],
            "a2a_message",
            2,
            "cannot be used multiple times",
        ),
    ];
    for (extra, content_type, code, said) in cases {
        let out = send(&tmp, "alpha", content_type, ok, &extra);
        assert!(
            out.code == code && out.stderr.contains(said),
            "{extra:?}: {} {}",
            out.code,
            out.stderr
        );
    }
    let float = send(
        &tmp,
        "alpha",
        "a2a_message",
        r#"{"content":"x","n":1.5}"#,
        &[],
    );
    assert!(
        float.code == 2 && float.refused("UNSUPPORTED_NUMBER"),
        "{}",
        float.stderr
    );
    let not_json = send(&tmp, "alpha", "a2a_message", "{", &[]);
    assert!(
        not_json.code == 2 && not_json.refused("INVALID_JSON"),
        "{}",
        not_json.stderr
    );
    let unknown = send(&tmp, "nobody", "a2a_message", ok, &[]);
    assert!(unknown.code == 2 && unknown.refused("NOT_FOUND"));
    // B holds only alpha's public key: it cannot sign with it.
    let file = tmp.write("p.json", ok);
    let peer = cli(
        &tmp,
        "b",
        &[
            "pack",
            "send",
            "--key",
            "alpha",
            "--content-type",
            "a2a_message",
            "--payload",
            file.to_str().unwrap(),
        ],
        None,
    );
    assert!(
        peer.code == 2 && peer.stderr.contains("peer's public key"),
        "{}",
        peer.stderr
    );
    let missing = cli(
        &tmp,
        "a",
        &[
            "pack",
            "send",
            "--content-type",
            "a2a_message",
            "--payload",
            file.to_str().unwrap(),
        ],
        None,
    );
    assert!(
        missing.code == 2 && missing.stderr.contains("not provided: --key <KEY_ID>"),
        "{}",
        missing.stderr
    );
}

/// A one-request HTTP/1.1 peer: reads the request, lands its body in B's store through
/// `handoff::accept` (what `agent-intercom serve` does), answers 200 with what landed or 401 with
/// the code. Returns the address and the request's head.
fn peer(
    tmp: &Tmp,
    answer: fn(&mut std::net::TcpStream, &str, &[u8], &Path, &Path),
) -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (keys, db) = (tmp.path("b"), tmp.path("b.db"));
    let handle = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut data = Vec::new();
        let mut buf = [0u8; 8192];
        let (head, body) = loop {
            let n = stream.read(&mut buf).unwrap();
            data.extend_from_slice(&buf[..n]);
            if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8(data[..end].to_vec()).unwrap();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("Content-Length: "))
                    .unwrap()
                    .parse()
                    .unwrap();
                while data.len() < end + 4 + length {
                    let n = stream.read(&mut buf).unwrap();
                    data.extend_from_slice(&buf[..n]);
                }
                break (head, data[end + 4..end + 4 + length].to_vec());
            }
        };
        answer(&mut stream, &head, &body, &keys, &db);
        head
    });
    (addr, handle)
}

fn land(stream: &mut std::net::TcpStream, _: &str, body: &[u8], keys: &Path, db: &Path) {
    use agent_intercom_scratchpad::{Config, Store, SystemClock};
    let mut store = Store::open(db, Config::default(), std::sync::Arc::new(SystemClock)).unwrap();
    let keys = KeyDir::open(keys).unwrap();
    let (status, text) =
        match agent_intercom_a2a::handoff::accept(&mut store, &keys, body, now_ms()) {
            Ok(landed) => ("200 OK", landed.to_json().to_string()),
            Err(e) => ("401 Unauthorized", format!("{{\"code\":\"{}\"}}", e.code())),
        };
    // Chunked, as a server may answer.
    let chunked = format!("{:x}\r\n{text}\r\n0\r\n\r\n", text.len());
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\n\r\n{chunked}"
    );
}

#[test]
fn pack_send_to_posts_to_a_peer() {
    let tmp = Tmp::new("http");
    two_machines(&tmp);
    let token = tmp.write("token", "s3cret-token\n");
    chmod(&token, 0o600);
    let (addr, server) = peer(&tmp, land);
    let url = format!("http://{addr}");
    let sent = send(
        &tmp,
        "alpha",
        "a2a_message",
        r#"{"content":"over http"}"#,
        &[
            "--to",
            &url,
            "--token-file",
            token.to_str().unwrap(),
            "--recipient",
            "bob",
        ],
    );
    let head = server.join().unwrap();
    assert_eq!(sent.code, 0, "{}", sent.stderr);
    assert!(
        head.starts_with("POST /v1/a2a/handoff HTTP/1.1\r\n"),
        "{head}"
    );
    let lines: Vec<&str> = head.lines().collect();
    assert!(
        lines.contains(&"Authorization: Bearer s3cret-token"),
        "{head}"
    );
    assert!(lines.contains(&"Content-Type: application/json"), "{head}");
    assert!(!sent.stderr.contains("s3cret-token") && !sent.stdout.contains("s3cret-token"));
    assert_eq!(sent.json()["sender"], "alpha");
    assert_eq!(unread(&tmp, "bob")[0]["content"], "over http");
    // A refusal by the peer: exit 1, its status and code said.
    let (addr, server) = peer(&tmp, land);
    let stranger = {
        cli(
            &tmp,
            "a",
            &[
                "keys",
                "generate",
                "--kind",
                "ed25519",
                "--id",
                "not-enrolled",
            ],
            None,
        );
        send(
            &tmp,
            "not-enrolled",
            "a2a_message",
            r#"{"content":"x"}"#,
            &["--to", &format!("http://{addr}/v1/a2a/handoff")],
        )
    };
    server.join().unwrap();
    assert!(
        stranger.code == 1
            && stranger.stderr.contains("HTTP 401")
            && stranger.stderr.contains("UNKNOWN_SIGNING_KEY"),
        "{}",
        stranger.stderr
    );
    // A response larger than the limit is refused.
    let (addr, server) = peer(&tmp, |stream, _, _, _, _| {
        let big = "x".repeat(2 * 1024 * 1024);
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{big}",
            big.len()
        );
    });
    let out = send(
        &tmp,
        "alpha",
        "a2a_message",
        r#"{"content":"x"}"#,
        &["--to", &format!("http://{addr}")],
    );
    server.join().unwrap();
    assert!(
        out.code == 1 && out.refused("INVALID_FRAME"),
        "{}",
        out.stderr
    );
    // A peer that never answers: the timeout ends it.
    let (addr, server) = peer(&tmp, |stream, _, _, _, _| {
        // Holds the connection until the client gives up and closes it.
        let _ = stream.read_to_end(&mut Vec::new());
    });
    let out = send(
        &tmp,
        "alpha",
        "a2a_message",
        r#"{"content":"x"}"#,
        &["--to", &format!("http://{addr}"), "--timeout", "1"],
    );
    server.join().unwrap();
    assert!(
        out.code == 1 && out.refused("NOT_CONNECTED") && out.stderr.contains("did not answer"),
        "{}",
        out.stderr
    );
    // A token file others can read is refused before anything is sent.
    chmod(&token, 0o644);
    let out = send(
        &tmp,
        "alpha",
        "a2a_message",
        r#"{"content":"x"}"#,
        &[
            "--to",
            "http://127.0.0.1:1",
            "--token-file",
            token.to_str().unwrap(),
        ],
    );
    assert!(out.code == 1 && out.refused("STORE_IO"), "{}", out.stderr);
}
