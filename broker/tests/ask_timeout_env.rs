//! `PI_INTERCOM_ASK_TIMEOUT_MS`, which both adapters' brokers read: an ask expires after it, an
//! explicit `ask_timeout_ms` wins over it, and a value their brokers refuse refuses the start.

mod common;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use agent_intercom_broker::BrokerConfig;
use agent_intercom_broker::config::ASK_TIMEOUT_ENV;
use agent_intercom_broker::embed;
use agent_intercom_core::ErrorCode;
use common::*;
use serde_json::json;

/// The settings every broker here runs with (no idle exit, no logging).
const QUIET: [(&str, &str); 2] = [("idle_exit_ms", "0"), ("log_level", "off")];

/// The configuration `embed::config` makes for `dir` with `settings` in an environment of `vars`.
fn config_with(
    dir: &Path,
    vars: &[(&str, &str)],
    settings: &[(&str, &str)],
) -> Result<BrokerConfig, agent_intercom_core::Error> {
    let vars: HashMap<String, OsString> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), OsString::from(v)))
        .collect();
    let settings = QUIET.iter().chain(settings).copied();
    embed::config_from_env(Some(dir), None, settings, |name| vars.get(name).cloned())
}

/// `b` is asked by `a`, acknowledges, and is told the ask expired; `a` saw it delivered.
fn an_ask_expires(config: BrokerConfig) {
    let socket = config.socket_path.clone();
    let broker = embed::start(config).expect("broker starts");
    let mut a = Client::connect(&socket);
    a.register("asker", None);
    let mut b = Client::connect(&socket);
    let b_id = b.register("asked", None);
    a.send(json!({
        "type": "send",
        "to": b_id,
        "message": { "id": "q", "timestamp": 1, "expectsReply": true, "content": { "text": "?" } },
    }));
    a.expect("delivery_accepted");
    let m = b.expect("message");
    b.send(json!({ "type": "message_received", "deliveryId": m["deliveryId"] }));
    a.expect("delivered");
    let cancelled = b.expect("ask_cancelled");
    assert_eq!(
        (
            cancelled["messageId"].as_str(),
            cancelled["reason"].as_str()
        ),
        (Some("q"), Some("expired"))
    );
    broker.close();
}

#[test]
fn an_ask_expires_after_the_variable() {
    let dir = TempDir::new("askenv");
    let config = config_with(&dir.0, &[(ASK_TIMEOUT_ENV, "300")], &[]).unwrap();
    assert_eq!(config.ask_timeout, Duration::from_millis(300));
    an_ask_expires(config);
}

#[test]
fn an_explicit_setting_wins_and_a_bad_variable_is_then_not_read() {
    let dir = TempDir::new("askset");
    let config = config_with(
        &dir.0,
        &[(ASK_TIMEOUT_ENV, "not a number")],
        &[("ask_timeout_ms", "300")],
    )
    .unwrap();
    assert_eq!(config.ask_timeout, Duration::from_millis(300));
    an_ask_expires(config);
    let config = config_with(
        Path::new("/x"),
        &[(ASK_TIMEOUT_ENV, "300")],
        &[("ask_timeout_ms", "600000")],
    )
    .unwrap();
    assert_eq!(config.ask_timeout, Duration::from_millis(600_000));
}

#[test]
fn the_variable_is_read_as_the_adapters_brokers_read_it() {
    let timeout = |value: &str| {
        config_with(Path::new("/x"), &[(ASK_TIMEOUT_ENV, value)], &[])
            .map(|c| c.ask_timeout.as_millis())
    };
    let default = BrokerConfig::for_agent_dir(Path::new("/x"))
        .ask_timeout
        .as_millis();
    assert_eq!(default, 600_000);
    // Unset or blank: the default (ours, which is Pi's; Claude's is 45 s).
    assert_eq!(
        config_with(Path::new("/x"), &[], &[])
            .unwrap()
            .ask_timeout
            .as_millis(),
        default
    );
    for blank in ["", "   ", "\t\n"] {
        assert_eq!(timeout(blank).unwrap(), default, "{blank:?}");
    }
    // JavaScript's Number, a positive safe integer.
    for (text, ms) in [
        ("45000", 45_000),
        (" 1000 ", 1000),
        ("1e3", 1000),
        ("1000.0", 1000),
        ("0x3e8", 1000),
        ("+7", 7),
        ("010", 10),
        // Over our maximum (30 days): the maximum. The Pi broker takes any safe integer.
        ("9007199254740991", 30 * 24 * 60 * 60 * 1000),
    ] {
        assert_eq!(timeout(text).unwrap(), ms, "{text:?}");
    }
    // What their brokers throw on at start: ours does not start, naming the variable.
    for text in [
        "0",
        "-0",
        "-5",
        "1.5",
        "10ms",
        "abc",
        "Infinity",
        "1_000",
        "0x",
        "9007199254740992",
    ] {
        let e = timeout(text).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{text:?}");
        assert!(e.message().contains(ASK_TIMEOUT_ENV), "{}", e.message());
    }
}

/// The marker that makes `child_reads_the_process_environment` do its work (in a child process
/// that the test below starts with the variable set, so no test changes this process's
/// environment).
const CHILD: &str = "AIC_ASK_TIMEOUT_ENV_CHILD";

#[test]
fn child_reads_the_process_environment() {
    let Some(expect) = std::env::var_os(CHILD) else {
        return;
    };
    let config = embed::config(None, None, QUIET);
    if expect == "refused" {
        let e = config.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(e.message().contains(ASK_TIMEOUT_ENV), "{}", e.message());
        println!("child: refused");
    } else {
        let config = config.unwrap();
        assert_eq!(config.ask_timeout, Duration::from_millis(300));
        an_ask_expires(config);
        println!("child: expired");
    }
}

#[test]
fn the_process_environment_reaches_the_broker() {
    for (value, expect) in [("300", "expired"), ("0", "refused")] {
        let dir = TempDir::new("askproc");
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "child_reads_the_process_environment",
                "--exact",
                "--nocapture",
            ])
            .env(CHILD, expect)
            .env(ASK_TIMEOUT_ENV, value)
            .env("PI_CODING_AGENT_DIR", &dir.0)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains(&format!("child: {expect}")), "{stdout}");
    }
}
