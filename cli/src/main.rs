//! `agent-intercom`: the command-line face of the protocol-v4 contract.
//!
//! Exit status: 0 success, 1 a check ran and failed, 2 bad usage or invalid input.

use std::io::{Read, Write};
use std::process::ExitCode;

use agent_intercom_broker::config::{IDLE_EXIT_SECS_KEY, LOG_LEVEL_KEY};
use agent_intercom_core::canonical;
use agent_intercom_core::corpus;
use agent_intercom_core::protocol::{self, SCOPE_ENV};
use agent_intercom_core::scope;
use agent_intercom_vendored as vendored;

mod keys;
mod line;
mod pack;
mod serve;

/// The help of each subcommand, in the order `agent-intercom --help` lists them. `pad`'s list of
/// operations is added from the scratchpad's own table (`pad_help`), never typed here.
const HELP: &[(&str, &str)] = &[
    (
        "scope",
        "  agent-intercom scope check [VALUE]
      validate VALUE, or $AGENT_INTERCOM_SCOPE_ID when omitted",
    ),
    (
        "vectors",
        "  agent-intercom vectors [--file PATH]
      run the protocol-v4 corpus (embedded, or PATH); print counts and hash",
    ),
    (
        "hash",
        "  agent-intercom hash DOMAIN
      canonical hash of the JSON document on stdin",
    ),
    (
        "canonical",
        "  agent-intercom canonical
      canonical JSON of the JSON document on stdin",
    ),
    (
        "vendored",
        "  agent-intercom vendored check PATH
      check a vendored agent-intercom-protocol-v4.mjs for drift",
    ),
    (
        "broker",
        "  agent-intercom broker [OPTIONS]
      run the broker (or use the one already running)
      --agent-dir DIR    agent directory (default $PI_CODING_AGENT_DIR, else ~/.pi/agent)
      --socket PATH      socket (default <agent-dir>/intercom/broker.sock)
      --idle-exit SECS   exit SECS after the last session leaves (default {idle}; 0 = never)
      --log-level LEVEL  {levels} (default {level}); no body or scope is logged
      --set KEY=VALUE    any limit, e.g. max_sessions=10000 (every key and range: docs/broker.md)
  agent-intercom broker status [--agent-dir DIR] [--socket PATH]
      health-check the broker: exit 0 compatible, 1 otherwise",
    ),
    (
        "pad",
        "  agent-intercom pad [OPTIONS] OP [JSON]
      one scratchpad operation; prints the result as JSON
  agent-intercom pad [OPTIONS] --stdin
      JSON lines {\"op\":..,\"args\":{..}} in, {\"ok\":..} lines out
      --db PATH          store (default $AGENT_INTERCOM_SCRATCHPAD,
                         else <agent-dir>/scratchpad.sqlite)
      --config JSON      store limits (docs/scratchpad.md)",
    ),
    ("serve", serve::HELP),
    ("keys", keys::HELP),
    ("pack", pack::HELP),
    ("line", line::HELP),
    (
        "version",
        "  agent-intercom version
      print versions",
    ),
];

/// Words wrapped at 100 columns behind an indent.
fn wrapped(indent: &str, words: &[&str]) -> String {
    let mut out = String::new();
    let mut line = String::from(indent);
    for word in words {
        if line.len() + word.len() + 1 > 100 && !line.trim().is_empty() {
            out += line.trim_end();
            out.push('\n');
            line = String::from(indent);
        }
        line += word;
        line.push(' ');
    }
    out + line.trim_end()
}

fn pad_help() -> String {
    use agent_intercom_scratchpad::api::{CHECKS, OPERATIONS};
    format!(
        "      OP: one of\n{}\n      or a rule check (needs no store)\n{}\n      \
         (arguments of each: docs/scratchpad.md)",
        wrapped("          ", OPERATIONS),
        wrapped("          ", CHECKS)
    )
}

/// A help text with the broker's defaults and log levels put in from the broker crate.
fn broker_facts(text: &str) -> String {
    use agent_intercom_broker::{BrokerConfig, LogLevel, config::DEFAULT_IDLE_EXIT_MS};
    let levels: Vec<&str> = LogLevel::ALL.iter().map(|l| l.as_str()).collect();
    let default_level = BrokerConfig::for_agent_dir(std::path::Path::new("/")).log_level;
    text.replace("{idle}", &(DEFAULT_IDLE_EXIT_MS / 1000).to_string())
        .replace("{levels}", &levels.join("|"))
        .replace("{level}", default_level.as_str())
}

/// The help of one subcommand, or of all.
fn help(command: Option<&str>) -> String {
    let mut out =
        String::from("agent-intercom: the canonical pi-intercom protocol-v4 contract\n\nusage:\n");
    for (name, text) in HELP {
        if command.is_none_or(|c| c == *name) {
            out += &if *name == "serve" {
                serve::help()
            } else {
                broker_facts(text)
            };
            out.push('\n');
            if *name == "pad" {
                out += &pad_help();
                out.push('\n');
            }
        }
    }
    out + "\nexit status: 0 ok, 1 a check failed, 2 bad usage or invalid input"
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("agent-intercom: {message}\n\n{}", help(None));
    ExitCode::from(2)
}

fn input_error(error: &agent_intercom_core::Error) -> ExitCode {
    eprintln!("agent-intercom: {} [{}]", error.message(), error.code());
    ExitCode::from(2)
}

fn read_stdin() -> Result<String, ExitCode> {
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
        eprintln!("agent-intercom: cannot read stdin: {e}");
        return Err(ExitCode::from(2));
    }
    String::from_utf8(bytes).map_err(|e| {
        eprintln!(
            "agent-intercom: stdin is not valid UTF-8 (invalid byte at offset {}) [INVALID_UTF8]",
            e.utf8_error().valid_up_to()
        );
        ExitCode::from(2)
    })
}

fn scope_check(value: Option<&std::ffi::OsStr>, source: &str) -> ExitCode {
    match scope::scope_from_env_value(value) {
        Ok(Some(_)) => {
            println!("{source}: valid scope id");
            ExitCode::SUCCESS
        }
        Ok(None) => {
            println!("{source}: unscoped (absent or empty)");
            ExitCode::SUCCESS
        }
        Err(_) => {
            // Never echo the value: a scope id is a capability.
            eprintln!(
                "agent-intercom: {source} must match {}",
                protocol::SCOPE_ID_PATTERN_SOURCE
            );
            ExitCode::from(2)
        }
    }
}

fn vectors(file: Option<&str>) -> ExitCode {
    let owned;
    let (text, origin) = match file {
        None => (corpus::CORPUS_JSON, "embedded corpus"),
        Some(path) => match std::fs::read_to_string(path) {
            Ok(t) => {
                owned = t;
                (owned.as_str(), path)
            }
            Err(e) => {
                eprintln!("agent-intercom: cannot read {path}: {e}");
                return ExitCode::from(2);
            }
        },
    };
    let doc = match canonical::parse(text) {
        Ok(doc) => doc,
        Err(e) => return input_error(&e),
    };
    let parsed = match corpus::parse_vectors(&doc) {
        Ok(v) => v,
        Err(e) => return input_error(&e),
    };
    let summary = corpus::run_all(&parsed);
    let hash = corpus::semantics_hash_of(&doc);
    for (name, why) in &summary.failed {
        eprintln!("FAIL {name}: {why}");
    }
    for (name, reason) in &summary.skipped {
        println!("skip {name}: {reason}");
    }
    println!(
        "{origin}: {} vectors, {} executed, {} skipped",
        summary.total,
        summary.executed(),
        summary.skipped.len()
    );
    let mut ok = summary.ok();
    match &hash {
        Ok(h) => {
            let matches = h == protocol::KNOWN_SEMANTICS_HASH;
            println!(
                "semantics hash {h} ({})",
                if matches {
                    "matches the published hash"
                } else {
                    "DIFFERS from the published hash"
                }
            );
            ok &= matches || file.is_some();
        }
        Err(e) => {
            eprintln!("agent-intercom: cannot hash the corpus: {e}");
            ok = false;
        }
    }
    println!(
        "{} passed, {} failed, {} skipped",
        summary.passed,
        summary.failed.len(),
        summary.skipped.len()
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn broker_config(
    options: &[String],
) -> Result<(agent_intercom_broker::BrokerConfig, bool), String> {
    let mut agent_dir = None;
    let mut socket = None;
    let mut sets: Vec<(String, String)> = Vec::new();
    let mut status = false;
    let mut iter = options.iter();
    while let Some(option) = iter.next() {
        let mut value = |name: &str| {
            iter.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match option.as_str() {
            "status" if agent_dir.is_none() && socket.is_none() && sets.is_empty() => status = true,
            "--agent-dir" => agent_dir = Some(std::path::PathBuf::from(value("--agent-dir")?)),
            "--socket" => socket = Some(std::path::PathBuf::from(value("--socket")?)),
            "--idle-exit" => sets.push((IDLE_EXIT_SECS_KEY.into(), value("--idle-exit")?)),
            "--log-level" => sets.push((LOG_LEVEL_KEY.into(), value("--log-level")?)),
            "--set" => {
                let pair = value("--set")?;
                let (k, v) = pair
                    .split_once('=')
                    .ok_or_else(|| format!("--set takes KEY=VALUE, not {pair:?}"))?;
                sets.push((k.to_string(), v.to_string()));
            }
            other => return Err(format!("unknown broker option {other:?}")),
        }
    }
    let settings = sets.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    let mut config =
        agent_intercom_broker::embed::config(agent_dir.as_deref(), socket.as_deref(), settings)
            .map_err(|e| format!("{} ({})", e.message(), e.code()))?;
    config.handle_signals = true;
    Ok((config, status))
}

fn broker(options: &[String]) -> ExitCode {
    let (config, status) = match broker_config(options) {
        Ok(c) => c,
        Err(e) => return usage_error(&e),
    };
    let socket = config.socket_path.clone();
    if status {
        let health = agent_intercom_broker::health(&socket, std::time::Duration::from_secs(1));
        println!("{}: {health:?}", socket.display());
        return if health == agent_intercom_broker::Health::Compatible {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    match agent_intercom_broker::ensure(config, std::time::Duration::from_secs(5)) {
        Ok(agent_intercom_broker::Ensured::Started(handle)) => {
            // The line the Pi adapter's broker prints once it listens (its remote-access test
            // waits for it on stdout); the socket is bound and broker.pid written by now.
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "Intercom broker started (pid: {}, {})",
                std::process::id(),
                agent_intercom_broker::wire::REMOTE_ACCESS_FEATURE
            );
            let _ = out.flush();
            drop(out);
            let reason = handle.wait();
            eprintln!("agent-intercom: broker stopped ({reason:?})");
            if reason == agent_intercom_broker::StopReason::Failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Ok(agent_intercom_broker::Ensured::Running(pid)) => {
            let pid = pid.map_or_else(|| "unknown pid".to_string(), |p| format!("pid {p}"));
            println!(
                "a broker is already running ({pid}) at {}; using it",
                socket.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("agent-intercom: {e}");
            ExitCode::FAILURE
        }
    }
}

fn pad_error(error: &agent_intercom_core::Error) -> ExitCode {
    use agent_intercom_core::ErrorCode;
    eprintln!("agent-intercom: {} [{}]", error.message(), error.code());
    match error.code() {
        ErrorCode::StoreIo
        | ErrorCode::StoreCorrupt
        | ErrorCode::StoreNewerSchema
        | ErrorCode::Internal => ExitCode::FAILURE,
        _ => ExitCode::from(2),
    }
}

fn pad(args: &[String]) -> ExitCode {
    use agent_intercom_scratchpad::{Store, SystemClock, api};
    let mut db = None;
    let mut config = None;
    let mut stdin = false;
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--db" | "--config" => {
                let Some(value) = it.next() else {
                    return usage_error(&format!("{arg} needs a value"));
                };
                // Given twice is refused rather than the last one winning unseen.
                let slot = if arg == "--db" { &mut db } else { &mut config };
                if slot.replace(value.as_str()).is_some() {
                    return usage_error(&format!("{arg} is given twice"));
                }
            }
            "--stdin" => stdin = true,
            other if other.starts_with("--") => {
                return usage_error(&format!("pad has no option {other}"));
            }
            _ => rest.push(arg.as_str()),
        }
    }
    let (op, args_text) = match (stdin, rest.as_slice()) {
        (true, []) => ("--stdin", None),
        (true, _) => return usage_error("--stdin takes its requests from stdin, not OP [JSON]"),
        (false, [op]) => (*op, None),
        (false, [op, text]) => (*op, Some(*text)),
        _ => return usage_error("pad needs OP [JSON] or --stdin"),
    };
    let env = api::process_env;
    let args = match api::parse(args_text, "the arguments") {
        Ok(v) => v,
        Err(e) => return input_error(&e),
    };
    let mut store = None;
    // Rule checks need no store, so none is opened for them.
    if !api::is_check(op) {
        let config = match api::parse(config, "--config").and_then(|c| api::config(&c)) {
            Ok(c) => c,
            Err(e) => return input_error(&e),
        };
        let path = db.map(std::path::PathBuf::from).unwrap_or_else(|| {
            agent_intercom_scratchpad::default_path(
                &env,
                agent_intercom_broker::config::agent_dir_from_env,
            )
        });
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
            && let Err(e) = std::fs::create_dir_all(parent)
        {
            eprintln!(
                "agent-intercom: cannot create {}: {e} [STORE_IO]",
                parent.display()
            );
            return ExitCode::FAILURE;
        }
        match Store::open(&path, config, std::sync::Arc::new(SystemClock)) {
            Ok(s) => store = Some(s),
            Err(e) => return pad_error(&e),
        }
    }
    if let (Some(store), "--stdin") = (store.as_mut(), op) {
        return pad_lines(store, &env);
    }
    let no_store =
        || agent_intercom_core::Error::new(agent_intercom_core::ErrorCode::Internal, "no store");
    match api::request(store.as_mut(), op, &args, &env, no_store) {
        Ok(v) => {
            println!("{v}");
            ExitCode::SUCCESS
        }
        Err(e) => pad_error(&e),
    }
}

/// The JSON-lines loop: one response line per request line, in order; a bad line gets an error
/// response and the loop goes on. Store-level failures (I/O, corruption) are reported the same way.
fn pad_lines(
    store: &mut agent_intercom_scratchpad::Store,
    env: &dyn Fn(&str) -> Option<String>,
) -> ExitCode {
    use std::io::{BufRead, Write};
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in stdin.lock().split(b'\n') {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("agent-intercom: cannot read stdin: {e}");
                return ExitCode::FAILURE;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let response = match request_of(&line) {
            Ok((id, op, args)) => {
                let result = agent_intercom_scratchpad::api::handle(store, &op, &args, env);
                respond(id, result)
            }
            Err(e) => respond(serde_json::Value::Null, Err(e)),
        };
        if writeln!(out, "{response}")
            .and_then(|_| out.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

type Request = (serde_json::Value, String, serde_json::Value);

fn request_of(line: &[u8]) -> Result<Request, agent_intercom_core::Error> {
    use agent_intercom_core::{Error, ErrorCode};
    let text = std::str::from_utf8(line).map_err(|e| {
        Error::new(
            ErrorCode::InvalidUtf8,
            format!(
                "request line is not valid UTF-8 (invalid byte at offset {})",
                e.valid_up_to()
            ),
        )
    })?;
    let mut value = agent_intercom_scratchpad::api::parse(Some(text), "the request line")?;
    let obj = value.as_object_mut().ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            "a request is a JSON object {\"op\":..,\"args\":{..}}",
        )
    })?;
    // The line's own keys are checked like an operation's, so a typo ("arg") is not ignored.
    if let Some(key) = obj
        .keys()
        .find(|k| !["op", "args", "id"].contains(&k.as_str()))
    {
        return Err(Error::new(
            ErrorCode::UnknownKey,
            format!("a request line does not take {key:?}; it takes: op, args, id"),
        ));
    }
    let id = obj.remove("id").unwrap_or(serde_json::Value::Null);
    let op = match obj.remove("op") {
        Some(serde_json::Value::String(op)) => op,
        _ => {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "op must be a string",
            ));
        }
    };
    Ok((
        id,
        op,
        obj.remove("args").unwrap_or(serde_json::Value::Null),
    ))
}

fn respond(
    id: serde_json::Value,
    result: Result<serde_json::Value, agent_intercom_core::Error>,
) -> serde_json::Value {
    let mut response = match result {
        Ok(v) => serde_json::json!({ "ok": true, "result": v }),
        Err(e) => {
            serde_json::json!({
                "ok": false,
                "error": { "code": e.code().as_str(), "message": e.message() },
            })
        }
    };
    if !id.is_null() {
        response["id"] = id;
    }
    response
}

fn run(args: &[String]) -> ExitCode {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    // `agent-intercom SUBCOMMAND ... --help` (or -h, or `help SUBCOMMAND`): that subcommand's help.
    if let [command, rest @ ..] = words.as_slice()
        && HELP.iter().any(|(name, _)| name == command)
        && rest.iter().any(|w| *w == "--help" || *w == "-h")
    {
        println!("{}", help(Some(command)));
        return ExitCode::SUCCESS;
    }
    match words.as_slice() {
        [] | ["help"] | ["--help"] | ["-h"] => {
            println!("{}", help(None));
            ExitCode::SUCCESS
        }
        ["help", command] if HELP.iter().any(|(name, _)| name == command) => {
            println!("{}", help(Some(command)));
            ExitCode::SUCCESS
        }
        ["version"] | ["--version"] => {
            println!(
                "agent-intercom {} (protocol {} v{}, vectors schema {}, semantics hash {})",
                agent_intercom_core::VERSION,
                protocol::PROTOCOL_NAME,
                protocol::PROTOCOL_VERSION,
                protocol::VECTOR_SCHEMA_VERSION,
                corpus::semantics_hash()
            );
            ExitCode::SUCCESS
        }
        ["scope", "check"] => scope_check(std::env::var_os(SCOPE_ENV).as_deref(), SCOPE_ENV),
        ["scope", "check", _] => scope_check(std::env::args_os().nth(3).as_deref(), "scope id"),
        ["broker", options @ ..] => {
            broker(&options.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        }
        ["pad", rest @ ..] => pad(&rest.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
        ["serve", rest @ ..] => {
            serve::serve(&rest.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        }
        ["keys", rest @ ..] => keys::run(rest),
        ["pack", rest @ ..] => pack::run(rest),
        ["line", rest @ ..] => line::run(rest),
        ["vectors"] => vectors(None),
        ["vectors", "--file", path] => vectors(Some(path)),
        ["hash", domain] => match read_stdin() {
            Ok(text) => match canonical::canonical_hash_of_text(domain, &text) {
                Ok(hash) => {
                    println!("{hash}");
                    ExitCode::SUCCESS
                }
                Err(e) => input_error(&e),
            },
            Err(code) => code,
        },
        ["canonical"] => match read_stdin() {
            Ok(text) => match canonical::canonical_json_of_text(&text) {
                Ok(json) => {
                    println!("{json}");
                    ExitCode::SUCCESS
                }
                Err(e) => input_error(&e),
            },
            Err(code) => code,
        },
        ["vendored", "check", path] => match std::fs::read(path) {
            Ok(bytes) => {
                let report = vendored::check_vendored(&bytes);
                if report.ok() {
                    println!(
                        "ok: {path} is byte-identical (sha256 {}); schema {}, semantics hash {}",
                        report.sha256,
                        protocol::VECTOR_SCHEMA_VERSION,
                        corpus::semantics_hash()
                    );
                    ExitCode::SUCCESS
                } else {
                    eprintln!("drift: {path}");
                    for problem in &report.problems {
                        eprintln!("  - {problem}");
                    }
                    ExitCode::FAILURE
                }
            }
            Err(e) => {
                eprintln!("agent-intercom: cannot read {path}: {e}");
                ExitCode::from(2)
            }
        },
        _ => usage_error("unknown command or wrong arguments"),
    }
}

fn main() -> ExitCode {
    // `scope check VALUE` validates the raw OS string (a non-Unicode value is simply invalid);
    // anywhere else an argument that is not valid Unicode is a usage error.
    let raw: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let scope_value = raw.len() == 3 && raw[0] == "scope" && raw[1] == "check";
    let mut args = Vec::with_capacity(raw.len());
    for (i, arg) in raw.iter().enumerate() {
        match arg.to_str() {
            Some(text) => args.push(text.to_string()),
            None if scope_value && i == 2 => args.push(String::new()),
            None => return usage_error("arguments must be valid UTF-8"),
        }
    }
    run(&args)
}
