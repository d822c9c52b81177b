//! Runs the real `agent-intercom` binary.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-intercom"));
    cmd.env_remove("AGENT_INTERCOM_SCOPE_ID");
    cmd
}

fn run(cmd: &mut Command, stdin: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn scope_check_argument_and_env_never_echo() {
    let ok = run(bin().args(["scope", "check", "Scope_AAAAAAAAAA"]), b"");
    assert_eq!(ok.status.code(), Some(0));
    let secret = "Secret.Scope.Value!";
    let bad = run(bin().args(["scope", "check", secret]), b"");
    assert_eq!(bad.status.code(), Some(2));
    let all = text(&bad.stdout) + &text(&bad.stderr);
    assert!(
        all.contains("must match ^[A-Za-z0-9_-]{16,128}$") && !all.contains(secret),
        "{all}"
    );

    let env_bad = run(
        bin()
            .args(["scope", "check"])
            .env("AGENT_INTERCOM_SCOPE_ID", "Scope_AAAAAAAAAA\n"),
        b"",
    );
    assert_eq!(env_bad.status.code(), Some(2));
    assert!(text(&env_bad.stderr).contains("AGENT_INTERCOM_SCOPE_ID must match"));
    let env_ok = run(
        bin()
            .args(["scope", "check"])
            .env("AGENT_INTERCOM_SCOPE_ID", "Scope_BBBBBBBBBB"),
        b"",
    );
    assert_eq!(env_ok.status.code(), Some(0));
    let unset = run(bin().args(["scope", "check"]), b"");
    assert_eq!(unset.status.code(), Some(0));
    assert!(text(&unset.stdout).contains("unscoped"));
    let empty = run(bin().args(["scope", "check", ""]), b"");
    assert_eq!(empty.status.code(), Some(0));
}

#[cfg(unix)]
#[test]
fn scope_check_non_unicode_is_invalid() {
    use std::os::unix::ffi::OsStrExt;
    let value = std::ffi::OsStr::from_bytes(b"Scope_AAAAAAAAA\xff");
    let out = run(bin().arg("scope").arg("check").arg(value), b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn vectors_prints_counts_and_hash() {
    let out = run(bin().arg("vectors"), b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("48 vectors, 43 executed, 5 skipped"),
        "{stdout}"
    );
    assert!(stdout.contains("ef23cae55b3cca7683fee60e5f2421350cde731dc5424c82286a33a8b9cdf6cb"));
    assert!(stdout.contains("43 passed, 0 failed, 5 skipped"));
}

#[test]
fn vectors_file_with_a_wrong_expectation_fails() {
    let dir = std::env::temp_dir().join(format!("aic-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.json");
    let corpus = agent_intercom_core::corpus::CORPUS_JSON.replacen(
        "\"expected\": \"invalid_scope\"",
        "\"expected\": \"valid_scoped\"",
        1,
    );
    std::fs::write(&path, corpus).unwrap();
    let out = run(bin().args(["vectors", "--file"]).arg(&path), b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("FAIL scope short rejected"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hash_and_canonical_from_stdin() {
    let out = run(bin().args(["hash", "boss-test-v1"]), br#"{"b":2,"a":1}"#);
    assert_eq!(
        text(&out.stdout).trim(),
        "4ff6c078039d0d494b220a4dafa919c183136d4cf7e303eed1bc642ab0b8e4c2"
    );
    let out = run(
        bin().arg("canonical"),
        b"{ \"b\": [1, 2], \"a\": \"\\u00e9\" }",
    );
    assert_eq!(text(&out.stdout).trim(), "{\"a\":\"é\",\"b\":[1,2]}");
    for (input, code) in [
        (&b"{\"a\":1.5}"[..], "UNSUPPORTED_NUMBER"),
        (b"\xff", "INVALID_UTF8"),
        (b"{", "INVALID_JSON"),
    ] {
        let out = run(bin().args(["hash", "d"]), input);
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out.stderr).contains(code), "{}", text(&out.stderr));
    }
    let out = run(bin().args(["hash", "bad domain"]), b"{}");
    assert!(text(&out.stderr).contains("INVALID_DOMAIN"));
}

#[test]
fn vendored_check() {
    let shipped = format!(
        "{}/../vendor/agent-intercom-protocol-v4.mjs",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = run(bin().args(["vendored", "check", &shipped]), b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let copy = std::env::temp_dir().join(format!("aic-vendored-{}.mjs", std::process::id()));
    std::fs::write(
        &copy,
        std::fs::read_to_string(&shipped)
            .unwrap()
            .replacen("\"worker\"", "\"Worker\"", 1),
    )
    .unwrap();
    let out = run(bin().args(["vendored", "check"]).arg(&copy), b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not byte-identical to a shipped file"));
    std::fs::remove_file(&copy).unwrap();
    // A file that cannot be read is a runtime failure naming it.
    let out = run(bin().args(["vendored", "check", "/nonexistent/x.mjs"]), b"");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "agent-intercom: error[IO]: cannot read the vendored copy /nonexistent/x.mjs: the \
         directory /nonexistent does not exist\n"
    );
}

/// The first line of stderr, which every error writes in the one format.
fn first_line(out: &Output) -> String {
    text(&out.stderr)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn version_flags_and_subcommand_print_one_line() {
    let expected = format!(
        "agent-intercom {} (protocol pi-intercom v4, vectors schema 2, semantics hash {})\n",
        env!("CARGO_PKG_VERSION"),
        agent_intercom_core::corpus::semantics_hash()
    );
    for args in [&["-V"][..], &["--version"], &["version"]] {
        let out = run(bin().args(args), b"");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(text(&out.stdout), expected, "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn no_arguments_is_the_usage_and_status_2() {
    let out = run(&mut bin(), b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(err.contains("Usage: agent-intercom <COMMAND>"), "{err}");
    assert!(err.contains("broker") && err.contains("pad"), "{err}");
}

#[test]
fn usage_errors_are_one_line_a_tip_and_the_usage_never_the_whole_help() {
    for (args, code, said, tip) in [
        (
            &["brokr"][..],
            "UNKNOWN_KEY",
            "unrecognized subcommand 'brokr'",
            "'broker'",
        ),
        (
            &["broker", "--idle-exitt", "3"],
            "UNKNOWN_KEY",
            "unexpected argument '--idle-exitt'",
            "'--idle-exit'",
        ),
        (
            &["pad", "--dbb", "x", "check.ttl"],
            "UNKNOWN_KEY",
            "unexpected argument '--dbb'",
            "'--db'",
        ),
        (
            &["hash"],
            "INVALID_ARGUMENT",
            "the following required arguments were not provided: <DOMAIN>",
            "Usage: agent-intercom hash <DOMAIN>",
        ),
        (
            &["serve", "--listen"],
            "INVALID_ARGUMENT",
            "a value is required for '--listen <ADDR:PORT>'",
            "Usage: agent-intercom serve",
        ),
        (
            &["keys", "generate", "--kind", "rsa", "--id", "k"],
            "INVALID_ARGUMENT",
            "invalid value 'rsa' for '--kind <KIND>'",
            "[possible values: ed25519, hmac]",
        ),
        (
            &["vectors", "--file", "a", "--file", "b"],
            "INVALID_ARGUMENT",
            "'--file <PATH>' cannot be used multiple times",
            "Usage: agent-intercom vectors",
        ),
    ] {
        let out = run(bin().args(args), b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = text(&out.stderr);
        assert_eq!(
            first_line(&out),
            format!(
                "agent-intercom: error[{code}]: {}",
                err.lines().next().unwrap().split("]: ").nth(1).unwrap()
            ),
            "{args:?}"
        );
        assert!(first_line(&out).contains(said), "{args:?}: {err}");
        assert!(err.contains(tip), "{args:?}: {err}");
        assert!(
            err.contains("For more information, try '--help'."),
            "{args:?}"
        );
        assert!(err.lines().count() <= 8, "{args:?}: the whole help? {err}");
    }
}

#[test]
fn options_take_their_value_joined_by_an_equals_sign_too() {
    let dir = std::env::temp_dir().join(format!("aic-cli-eq-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let corpus = dir.join("corpus.json");
    std::fs::write(&corpus, agent_intercom_core::corpus::CORPUS_JSON).unwrap();
    let out = run(
        bin()
            .arg(format!("--file={}", corpus.display()))
            .arg("vectors"),
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "an option of vectors before it");
    let out = run(
        bin()
            .arg("vectors")
            .arg(format!("--file={}", corpus.display())),
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let db = dir.join("pad.sqlite");
    let out = run(
        bin().args([
            "pad",
            &format!("--db={}", db.display()),
            "--config={\"per_project_cap\":5}",
            "register",
            r#"{"agent":"a"}"#,
        ]),
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(db.exists());
    let out = run(
        bin().args([
            "broker",
            "--idle-exit=-1",
            "--agent-dir",
            dir.to_str().unwrap(),
        ]),
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        first_line(&out).starts_with("agent-intercom: error[INVALID_ARGUMENT]: idle_exit_secs"),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn errors_have_one_format_a_stable_code_and_the_status_of_their_kind() {
    let dir = std::env::temp_dir().join(format!("aic-cli-errors-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let under_file = file.join("x.sqlite");
    let missing = dir.join("missing/deeper/x.sqlite");
    // (arguments, stdin, exit status, code, what the message says)
    type Case<'a> = (Vec<String>, &'a [u8], i32, &'a str, Vec<String>);
    let cases: Vec<Case> = vec![
        (
            vec!["scope".into(), "check".into(), "not a scope".into()],
            b"",
            2,
            "INVALID_SCOPE",
            vec!["scope id must match".into()],
        ),
        (
            vec!["hash".into(), "d".into()],
            b"{",
            2,
            "INVALID_JSON",
            vec![],
        ),
        (
            vec!["canonical".into()],
            b"\xff",
            2,
            "INVALID_UTF8",
            vec!["stdin".into()],
        ),
        (
            vec![
                "pad".into(),
                "--db".into(),
                missing.display().to_string(),
                "register".into(),
                r#"{"agent":"a"}"#.into(),
            ],
            b"",
            1,
            "IO",
            vec![
                format!(
                    "the directory {} does not exist",
                    dir.join("missing").display()
                ),
                missing.display().to_string(),
            ],
        ),
        (
            vec![
                "pad".into(),
                "--db".into(),
                under_file.display().to_string(),
                "register".into(),
                r#"{"agent":"a"}"#.into(),
            ],
            b"",
            1,
            "IO",
            vec![format!("{} is not a directory", file.display())],
        ),
        (
            vec![
                "broker".into(),
                "--agent-dir".into(),
                dir.join("no-agent-dir").display().to_string(),
            ],
            b"",
            1,
            "IO",
            vec![format!(
                "{} does not exist",
                dir.join("no-agent-dir").display()
            )],
        ),
        (
            vec![
                "pad".into(),
                "--db".into(),
                dir.join("p.sqlite").display().to_string(),
                "check.ttl".into(),
                r#"{"ttl_hours":0}"#.into(),
            ],
            b"",
            2,
            "INVALID_TTL",
            vec![],
        ),
        (
            vec!["mcp".into(), "--name".into(), " ".into()],
            b"",
            2,
            "INVALID_ARGUMENT",
            vec!["--name is blank".into()],
        ),
        (
            vec!["mcp".into(), "--session-id".into(), "".into()],
            b"",
            2,
            "INVALID_ARGUMENT",
            vec!["--session-id is blank".into()],
        ),
    ];
    for (args, stdin, status, code, says) in cases {
        let out = run(bin().args(&args), stdin);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(status), "{args:?}: {err}");
        let prefix = format!("agent-intercom: error[{code}]: ");
        assert!(err.starts_with(&prefix), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        for s in says {
            assert!(err.contains(&s), "{args:?}: {s:?} not in {err}");
        }
    }
    assert!(
        !dir.join("missing").exists(),
        "a named directory was created"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn only_the_default_agent_directory_is_created() {
    let dir = std::env::temp_dir().join(format!("aic-cli-agentdir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let agent = dir.join("new/agent");
    let out = run(
        bin()
            .args(["pad", "register", r#"{"agent":"a"}"#])
            .env("PI_CODING_AGENT_DIR", &agent)
            .env_remove("AGENT_INTERCOM_SCRATCHPAD"),
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(agent.join("scratchpad.sqlite").exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&agent).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    // A store named by the variable is the user's: its directory is not created.
    let named = dir.join("elsewhere/pad.sqlite");
    let out = run(
        bin()
            .args(["pad", "register", r#"{"agent":"a"}"#])
            .env("PI_CODING_AGENT_DIR", &agent)
            .env("AGENT_INTERCOM_SCRATCHPAD", &named),
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("$AGENT_INTERCOM_SCRATCHPAD"),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.join("elsewhere").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_subcommand_answers_help() {
    for command in [
        &["scope"][..],
        &["scope", "check"],
        &["vectors"],
        &["hash"],
        &["canonical"],
        &["vendored", "check"],
        &["broker"],
        &["broker", "status"],
        &["pad"],
        &["serve"],
        &["keys"],
        &["keys", "generate"],
        &["pack", "send"],
        &["line"],
        &["line", "host", "migrate"],
        &["version"],
    ] {
        for flag in ["--help", "-h"] {
            let out = run(bin().args(command).arg(flag), b"");
            assert_eq!(out.status.code(), Some(0), "{command:?} {flag}");
            let help = text(&out.stdout);
            assert!(
                help.contains(&format!("Usage: agent-intercom {}", command.join(" "))),
                "{command:?}: {help}"
            );
        }
    }
    let out = run(bin().args(["help", "pad"]), b"");
    assert_eq!(out.status.code(), Some(0));
    // The operations come from the scratchpad's own table: none is missing.
    let help = text(&out.stdout);
    for op in agent_intercom_scratchpad::api::OPERATIONS
        .iter()
        .chain(agent_intercom_scratchpad::api::CHECKS)
    {
        assert!(
            help.split_whitespace().any(|w| w == *op),
            "{op} missing: {help}"
        );
    }
    // The broker's log levels and idle default come from the broker crate, not the help text.
    let broker_help = text(&run(bin().args(["broker", "--help"]), b"").stdout);
    let levels: Vec<&str> = agent_intercom_broker::LogLevel::ALL
        .iter()
        .map(|l| l.as_str())
        .collect();
    assert!(broker_help.contains(&levels.join("|")), "{broker_help}");
    let idle = agent_intercom_broker::config::DEFAULT_IDLE_EXIT_MS / 1000;
    assert!(
        broker_help.contains(&format!("(default {idle};")),
        "{broker_help}"
    );
    let all = text(&run(bin().arg("--help"), b"").stdout);
    assert!(all.contains("Exit status: 0 success"), "{all}");
}
