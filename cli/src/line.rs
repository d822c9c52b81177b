//! `agent-intercom line`: the signed outbound Agent-to-Agent line (docs/line.md). Host commands
//! prepare the custody database; `line session` is the operator's NDJSON session. Every answer
//! and every refusal is one JSON object; no secret is ever taken on the command line or printed.

use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::process::ExitCode;

use agent_intercom_core::canonical::{self, Value};
use agent_intercom_line::authority::{self, Fences};
use agent_intercom_line::config::PublicConfig;
use agent_intercom_line::fault::Faults;
use agent_intercom_line::native::{self, NATIVE_PROFILE};
use agent_intercom_line::startup::Profile;
use agent_intercom_line::{Code, LineError, PROFILE, host, schema, secrets, startup, task};

use crate::keys::Options;

/// The help of `agent-intercom line`.
pub const HELP: &str = "  agent-intercom line host migrate --db ABS [--to N]
      bring the custody database to revision N (default the newest; 0 is refused while any
      custody row remains)
  agent-intercom line host set-operator-credential --db ABS
      store the digest of the credential $AGENT_INTERCOM_LINE_OPERATOR_CREDENTIAL_FILE names
  agent-intercom line host establish-policy --db ABS --config ABS
      make the configuration's policy generation durable (its capacity rows too)
  agent-intercom line session --config ABS
      the outbound-public-text@1 session: JSON lines in, one JSON answer per line out; the
      database is $AGENT_INTERCOM_LINE_DATABASE, the workload key
      $AGENT_INTERCOM_LINE_SIGNING_KEY_FILE (both absolute)
  agent-intercom line native-lab --config ABS
      the native-public-peer@1 run lab (revision 2): the same environment and configuration,
      operations enroll rotate revoke submit-public-run tick status cancel-run reauthorize-run";

/// The operations of the outbound profile; any other name is `unknown_operation`.
const PROFILE_OPERATIONS: &[&str] = &[
    "enroll",
    "declare-public",
    "submit",
    "poll",
    "cancel",
    "read",
    "rotate",
    "revoke",
];
/// The native lab's own operations (besides enroll, rotate and revoke).
const NATIVE_OPERATIONS: &[&str] = &[
    "submit-public-run",
    "tick",
    "status",
    "cancel-run",
    "reauthorize-run",
];
/// The longest input line, in bytes.
const MAX_LINE_BYTES: usize = 1024 * 1024;

fn env(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

fn refuse(error: &LineError) -> ExitCode {
    eprintln!("{}", error.to_json());
    ExitCode::from(error.code.exit_status())
}

fn usage(message: impl Into<String>) -> ExitCode {
    refuse(&LineError::new(Code::Usage, message))
}

fn answer(value: &serde_json::Value) -> ExitCode {
    println!("{value}");
    ExitCode::SUCCESS
}

fn now_ms() -> Result<i64, LineError> {
    Ok(Faults::from_env(&env)?.now_ms())
}

/// `agent-intercom line ...`.
pub fn run(args: &[&str]) -> ExitCode {
    let owned = |rest: &[&str]| rest.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match args {
        ["host", "migrate", rest @ ..] => migrate(&owned(rest)),
        ["host", "set-operator-credential", rest @ ..] => set_credential(&owned(rest)),
        ["host", "establish-policy", rest @ ..] => establish(&owned(rest)),
        ["session", rest @ ..] => session(&owned(rest), Profile::Outbound),
        ["native-lab", rest @ ..] => session(&owned(rest), Profile::Native),
        _ => usage("unknown line command (agent-intercom line --help)"),
    }
}

fn migrate(args: &[String]) -> ExitCode {
    let result = (|| {
        let options = Options::parse(args, &["--db", "--to"], &[], &[])
            .map_err(|e| LineError::new(Code::Usage, e))?;
        Faults::from_env(&env)?;
        let db = schema::db_path(
            options
                .require("--db")
                .map_err(|e| LineError::new(Code::Usage, e))?,
        )?;
        let to = match options.get("--to") {
            None => schema::NEWEST_REVISION,
            Some(text) => text
                .parse()
                .map_err(|_| LineError::new(Code::Usage, "--to must be a revision number"))?,
        };
        schema::migrate(&db, to)
    })();
    match result {
        Ok(m) => answer(&serde_json::json!({"ok": true, "from": m.from, "revision": m.to})),
        Err(e) => refuse(&e),
    }
}

fn set_credential(args: &[String]) -> ExitCode {
    let result = (|| {
        let options = Options::parse(args, &["--db"], &[], &[])
            .map_err(|e| LineError::new(Code::Usage, e))?;
        let db = schema::db_path(
            options
                .require("--db")
                .map_err(|e| LineError::new(Code::Usage, e))?,
        )?;
        let now = now_ms()?;
        let credential = secrets::load_credential(&env)?;
        host::set_operator_credential(&db, &credential, now)
    })();
    match result {
        Ok(id) => answer(&serde_json::json!({"ok": true, "installation_id": id})),
        Err(e) => refuse(&e),
    }
}

fn establish(args: &[String]) -> ExitCode {
    let result = (|| {
        let options = Options::parse(args, &["--db", "--config"], &[], &[])
            .map_err(|e| LineError::new(Code::Usage, e))?;
        let db = schema::db_path(
            options
                .require("--db")
                .map_err(|e| LineError::new(Code::Usage, e))?,
        )?;
        let now = now_ms()?;
        let config = PublicConfig::load(
            options
                .require("--config")
                .map_err(|e| LineError::new(Code::Usage, e))?,
        )?;
        host::establish_policy(&db, &config.policy, now)
    })();
    match result {
        Ok(e) => answer(&serde_json::json!({
            "ok": true,
            "generation": e.generation,
            "digest": e.digest,
            "new": e.new,
            "scopes_created": e.scopes_created,
        })),
        Err(e) => refuse(&e),
    }
}

fn session(args: &[String], profile: Profile) -> ExitCode {
    let options = match Options::parse(args, &["--config"], &[], &[]) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let Some(config) = options.get("--config") else {
        return usage("--config is required");
    };
    // Everything is checked before the first input line is read.
    let mut started = match startup::start_profile(&env, config, profile) {
        Ok(s) => s,
        Err(e) => return refuse(&e),
    };
    let ready = serde_json::json!({
        "ready": true,
        "profile": if profile == Profile::Native { NATIVE_PROFILE } else { PROFILE },
        "workload_id": started.config.workload_id,
        "generation": started.config.policy.generation,
        "startup_id": started.startup_id,
    });
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{ready}").and_then(|_| out.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    let mut input = std::io::stdin().lock();
    let mut fences = Fences::default();
    let mut memory = task::Memory::default();
    loop {
        let line = match read_line(&mut input) {
            Ok(Some(line)) => line,
            Ok(None) => return ExitCode::SUCCESS,
            Err(_) => return ExitCode::FAILURE,
        };
        let reply = handle(&mut started, &mut fences, &mut memory, profile, line);
        if writeln!(out, "{reply}").and_then(|_| out.flush()).is_err() {
            return ExitCode::FAILURE;
        }
    }
}

/// One input line (without its newline), `Err` for a line over the limit (the rest of it is
/// skipped), `None` at the end of input.
fn read_line(input: &mut impl BufRead) -> std::io::Result<Option<Result<String, ()>>> {
    let mut bytes = Vec::new();
    let mut too_long = false;
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            if bytes.is_empty() && !too_long {
                return Ok(None);
            }
            break;
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if bytes.len() + chunk.len() > MAX_LINE_BYTES {
            too_long = true;
        } else {
            bytes.extend_from_slice(chunk);
        }
        let used = done.unwrap_or(buf.len());
        input.consume(used);
        if done.is_some() {
            break;
        }
    }
    if too_long {
        return Ok(Some(Err(())));
    }
    Ok(Some(String::from_utf8(bytes).map_err(|_| ())))
}

/// The answer to one input line.
fn handle(
    started: &mut startup::Started,
    fences: &mut Fences,
    memory: &mut task::Memory,
    profile: Profile,
    line: Result<String, ()>,
) -> serde_json::Value {
    let malformed =
        || LineError::new(Code::Malformed, "each input line is one JSON object").to_json();
    let Ok(text) = line else {
        return malformed();
    };
    let Ok(value) = canonical::parse(&text) else {
        return malformed();
    };
    let Value::Object(_) = value else {
        return malformed();
    };
    // A member given twice is found by encoding.
    if canonical::canonical_json(&value).is_err() {
        return malformed();
    }
    let Some(operation) = value.get("operation").and_then(Value::as_str) else {
        return LineError::new(Code::Malformed, "`operation` must be a string")
            .with("field", "operation")
            .to_json();
    };
    let result = if matches!(operation, "enroll" | "rotate" | "revoke") {
        let fingerprint = started.identities.workload.fingerprint();
        let ctx = authority::Context {
            config: &started.config,
            workload_fingerprint: &fingerprint,
            faults: &started.faults,
        };
        let conn = &mut started.conn;
        match operation {
            "enroll" => authority::enroll(conn, &ctx, fences, &value),
            "rotate" => authority::rotate(conn, &ctx, fences, &value),
            _ => authority::revoke(conn, &ctx, fences, &value),
        }
    } else if profile == Profile::Native && NATIVE_OPERATIONS.contains(&operation) {
        startup::check_live(&started.conn, started.config.policy.generation).and_then(|()| {
            match operation {
                "submit-public-run" => native::submit_public_run(started, fences, &value),
                "tick" => native::tick(started, fences, &value),
                "status" => native::status(started, &value),
                "cancel-run" => native::cancel_run(started, &value),
                _ => native::reauthorize_run(started, &value),
            }
        })
    } else if profile == Profile::Outbound && PROFILE_OPERATIONS.contains(&operation) {
        startup::check_live(&started.conn, started.config.policy.generation).and_then(|()| {
            match operation {
                "declare-public" => task::declare(started, fences, memory, &value),
                "submit" => task::submit(started, fences, memory, &value),
                "poll" => task::poll(started, fences, memory, &value),
                "cancel" => task::cancel(started, fences, memory, &value),
                _ => task::read(started, memory, &value),
            }
        })
    } else {
        Err(LineError::new(
            Code::UnknownOperation,
            "the session has no such operation",
        ))
    };
    let mut reply = match result {
        Ok(v) => v,
        Err(e) => e.to_json(),
    };
    // Every answer echoes its operation, except an uncertain outcome: that is exactly
    // `{"error":"unknown","task_id":...}` (or `"peer_id"` for an authority mutation).
    if let serde_json::Value::Object(map) = &mut reply
        && map.get("error").and_then(serde_json::Value::as_str) != Some("unknown")
    {
        map.insert("operation".into(), operation.into());
    }
    reply
}
