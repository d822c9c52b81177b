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
    let out = run(bin().args(["vendored", "check", "/nonexistent/x.mjs"]), b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn usage_errors() {
    let out = run(bin().arg("frobnicate"), b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("usage:"));
    assert_eq!(run(bin().arg("--help"), b"").status.code(), Some(0));
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
        &["pad", "post"],
        &["line"],
        &["line", "host", "migrate"],
        &["version"],
    ] {
        for flag in ["--help", "-h"] {
            let out = run(bin().args(command).arg(flag), b"");
            assert_eq!(out.status.code(), Some(0), "{command:?} {flag}");
            let help = text(&out.stdout);
            assert!(
                help.contains(&format!("agent-intercom {}", command[0])),
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
    assert!(
        !broker_help.contains('{'),
        "a placeholder was left: {broker_help}"
    );
    let all = text(&run(bin().arg("--help"), b"").stdout);
    assert!(
        all.contains("check.rate") && all.contains("agent-intercom broker status"),
        "{all}"
    );
}
