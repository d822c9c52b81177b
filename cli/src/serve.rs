//! `agent-intercom serve`: the A2A HTTP endpoint over the scratchpad store (docs/a2a.md).

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use agent_intercom_a2a::server::{DEFAULT_ASSIGNEE, DEFAULT_BLOCKING_TIMEOUT};
use agent_intercom_a2a::{ServeConfig, StartError};

/// The help of `serve`.
pub const HELP: &str = "  agent-intercom serve [OPTIONS]
      the A2A endpoint (JSON-RPC 1.0 and 0.3, Agent Card) over the scratchpad store; prints
      'agent-intercom serve listening on http://ADDR:PORT'; SIGTERM or SIGINT stop it
      --listen ADDR:PORT       where to listen (default 127.0.0.1:0, any free port)
      --db PATH                store (default as for pad)
      --config JSON            store limits (as for pad)
      --keys DIR               keys directory: enrolled peer keys (handoffs, signed requests);
                               default as for keys
      --token-file FILE        bearer token every POST must carry (a 0600 file)
      --allow-non-loopback     listen beyond loopback (needs --token-file)
      --require-signatures     every JSON-RPC request signed (RFC 9421); the card says so
      --public-url URL         where clients reach this service (the Agent Card's URLs)
      --assignee NAME          the local agent A2A tasks are assigned to (default {assignee})
      --project-root PATH      project root of A2A tasks
      --blocking-timeout SECS  longest wait of a blocking send (default {blocking})
      --request-timeout SECS   longest request (default 30)";

/// The help with its defaults put in.
pub fn help() -> String {
    HELP.replace("{assignee}", DEFAULT_ASSIGNEE).replace(
        "{blocking}",
        &DEFAULT_BLOCKING_TIMEOUT.as_secs().to_string(),
    )
}

fn listen_addr(text: &str) -> Result<SocketAddr, String> {
    if let Some(port) = text.strip_prefix("localhost:") {
        let port: u16 = port
            .parse()
            .map_err(|_| format!("--listen {text:?}: the port must be 0 to 65535"))?;
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse().map_err(|_| {
        format!("--listen {text:?} must be ADDR:PORT with an IP address, e.g. 127.0.0.1:8080")
    })
}

fn seconds(flag: &str, text: &str, max: u64) -> Result<Duration, String> {
    match text.parse::<u64>() {
        Ok(n) if n <= max => Ok(Duration::from_secs(n)),
        _ => Err(format!(
            "{flag} must be a whole number of seconds from 0 to {max}"
        )),
    }
}

/// Options taking a value.
const VALUED: &[&str] = &[
    "--listen",
    "--db",
    "--config",
    "--keys",
    "--token-file",
    "--public-url",
    "--assignee",
    "--project-root",
    "--blocking-timeout",
    "--request-timeout",
];

/// The options as a [`ServeConfig`]; `Err` is a usage error.
fn config_of(args: &[String]) -> Result<ServeConfig, String> {
    let mut values: Vec<(&str, &str)> = Vec::new();
    let mut flags: Vec<&str> = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let arg = arg.as_str();
        if VALUED.contains(&arg) {
            let value = it.next().ok_or_else(|| format!("{arg} needs a value"))?;
            // Given twice is refused rather than the last one winning unseen.
            if values.iter().any(|(k, _)| *k == arg) {
                return Err(format!("{arg} is given twice"));
            }
            values.push((arg, value));
        } else if ["--allow-non-loopback", "--require-signatures"].contains(&arg) {
            if flags.contains(&arg) {
                return Err(format!("{arg} is given twice"));
            }
            flags.push(arg);
        } else if arg.starts_with("--") {
            return Err(format!("serve has no option {arg}"));
        } else {
            return Err(format!("serve takes no argument {arg:?} (options only)"));
        }
    }
    let value = |key: &str| values.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let env = agent_intercom_scratchpad::api::process_env;
    let db = value("--db")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            agent_intercom_scratchpad::default_path(
                &env,
                agent_intercom_broker::config::agent_dir_from_env,
            )
        });
    let mut config = ServeConfig::new(db);
    if let Some(text) = value("--config") {
        let parsed = agent_intercom_scratchpad::api::parse(Some(text), "--config")
            .and_then(|c| agent_intercom_scratchpad::api::config(&c))
            .map_err(|e| format!("{} [{}]", e.message(), e.code()))?;
        config.store = parsed;
    }
    if let Some(text) = value("--listen") {
        config.listen = listen_addr(text)?;
    }
    // As for `keys` and `pack`: --keys, else $AGENT_INTERCOM_KEYS_DIR, else beside the store.
    config.keys = Some(match value("--keys") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => agent_intercom_a2a::keys::default_dir(
            &env,
            agent_intercom_broker::config::agent_dir_from_env,
        ),
    });
    config.token_file = value("--token-file").map(std::path::PathBuf::from);
    config.public_url = value("--public-url").map(str::to_string);
    if let Some(name) = value("--assignee") {
        config.assignee = name.to_string();
    }
    config.project_root = value("--project-root").map(str::to_string);
    if let Some(text) = value("--blocking-timeout") {
        config.blocking_timeout = seconds("--blocking-timeout", text, 600)?;
    }
    if let Some(text) = value("--request-timeout") {
        config.limits.request_timeout = seconds("--request-timeout", text, 3600)?;
    }
    config.allow_non_loopback = flags.contains(&"--allow-non-loopback");
    config.require_signatures = flags.contains(&"--require-signatures");
    Ok(config)
}

/// Runs `agent-intercom serve` until SIGTERM or SIGINT: 0 after a graceful stop, 2 for bad
/// options, 1 when the store or the socket failed.
pub fn serve(args: &[String]) -> ExitCode {
    let config = match config_of(args) {
        Ok(c) => c,
        Err(message) => return crate::usage_error(&message),
    };
    if let Some(parent) = config.db.parent().filter(|p| !p.as_os_str().is_empty())
        && let Err(e) = std::fs::create_dir_all(parent)
    {
        eprintln!(
            "agent-intercom: cannot create {}: {e} [STORE_IO]",
            parent.display()
        );
        return ExitCode::FAILURE;
    }
    let outcome = agent_intercom_a2a::run(config, |addr| {
        // One line tests and scripts wait for; flushed, as stdout may be a pipe.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "agent-intercom serve listening on http://{addr}");
        let _ = out.flush();
    });
    match outcome {
        Ok(()) => {
            eprintln!("agent-intercom serve: stopped");
            ExitCode::SUCCESS
        }
        Err(StartError::Config(message)) => {
            eprintln!("agent-intercom: {message}");
            ExitCode::from(2)
        }
        Err(StartError::Store(e)) => crate::pad_error(&e),
        Err(e @ StartError::Io(_)) => {
            eprintln!("agent-intercom: {e}");
            ExitCode::FAILURE
        }
    }
}
