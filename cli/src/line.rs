//! `agent-intercom line`: the signed outbound Agent-to-Agent line (docs/line.md). Host commands
//! prepare the custody database; `line session` is the operator's NDJSON session. Every answer
//! and every refusal is one JSON object; no secret is ever taken on the command line or printed.

use std::ffi::OsString;
use std::io::{BufRead, Write};

use agent_intercom_core::canonical::{self, Value};
use agent_intercom_line::authority::{self, Fences};
use agent_intercom_line::config::PublicConfig;
use agent_intercom_line::fault::Faults;
use agent_intercom_line::native::{self, NATIVE_PROFILE};
use agent_intercom_line::startup::Profile;
use agent_intercom_line::{Code, LineError, PROFILE, host, schema, secrets, startup, task};
use clap::{Args, Subcommand};

use crate::fail::{Outcome, io};

#[derive(Args)]
pub struct LineArgs {
    #[command(subcommand)]
    command: LineCommand,
}

#[derive(Subcommand)]
enum LineCommand {
    /// Prepare the custody database (an operator's commands)
    #[command(subcommand)]
    Host(HostCommand),
    /// The outbound-public-text@1 session: JSON lines in, one JSON answer per line out; the
    /// database is $AGENT_INTERCOM_LINE_DATABASE, the workload key
    /// $AGENT_INTERCOM_LINE_SIGNING_KEY_FILE (both absolute)
    Session(SessionArgs),
    /// The native-public-peer@1 run lab (revision 2): the same environment and configuration;
    /// operations enroll rotate revoke submit-public-run tick status cancel-run reauthorize-run
    NativeLab(SessionArgs),
}

#[derive(Subcommand)]
enum HostCommand {
    /// Bring the custody database to revision N (default the newest; 0 is refused while any
    /// custody row remains)
    Migrate {
        /// The custody database (absolute)
        #[arg(long, value_name = "ABS")]
        db: String,
        /// The revision
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        to: Option<i64>,
    },
    /// Store the digest of the credential $AGENT_INTERCOM_LINE_OPERATOR_CREDENTIAL_FILE names
    SetOperatorCredential {
        /// The custody database (absolute)
        #[arg(long, value_name = "ABS")]
        db: String,
    },
    /// Make the configuration's policy generation durable (its capacity rows too)
    EstablishPolicy {
        /// The custody database (absolute)
        #[arg(long, value_name = "ABS")]
        db: String,
        /// The public configuration (absolute)
        #[arg(long, value_name = "ABS")]
        config: String,
    },
}

#[derive(Args)]
struct SessionArgs {
    /// The public configuration (absolute)
    #[arg(long, value_name = "ABS")]
    config: String,
}

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

/// A host command's answer: one JSON object on stdout.
fn answer(value: &serde_json::Value) -> Outcome {
    println!("{value}");
    Ok(())
}

fn now_ms() -> Result<i64, LineError> {
    Ok(Faults::from_env(&env)?.now_ms())
}

/// `agent-intercom line ...`.
pub fn run(args: LineArgs) -> Outcome {
    match args.command {
        LineCommand::Host(HostCommand::Migrate { db, to }) => {
            Faults::from_env(&env)?;
            let db = schema::db_path(&db)?;
            let m = schema::migrate(&db, to.unwrap_or(schema::NEWEST_REVISION))?;
            answer(&serde_json::json!({"ok": true, "from": m.from, "revision": m.to}))
        }
        LineCommand::Host(HostCommand::SetOperatorCredential { db }) => {
            let db = schema::db_path(&db)?;
            let now = now_ms()?;
            let credential = secrets::load_credential(&env)?;
            let id = host::set_operator_credential(&db, &credential, now)?;
            answer(&serde_json::json!({"ok": true, "installation_id": id}))
        }
        LineCommand::Host(HostCommand::EstablishPolicy { db, config }) => {
            let db = schema::db_path(&db)?;
            let now = now_ms()?;
            let config = PublicConfig::load(&config)?;
            let e = host::establish_policy(&db, &config.policy, now)?;
            answer(&serde_json::json!({
                "ok": true,
                "generation": e.generation,
                "digest": e.digest,
                "new": e.new,
                "scopes_created": e.scopes_created,
            }))
        }
        LineCommand::Session(args) => session(&args, Profile::Outbound),
        LineCommand::NativeLab(args) => session(&args, Profile::Native),
    }
}

fn session(args: &SessionArgs, profile: Profile) -> Outcome {
    // Everything is checked before the first input line is read.
    let mut started = startup::start_profile(&env, &args.config, profile)?;
    let ready = serde_json::json!({
        "ready": true,
        "profile": if profile == Profile::Native { NATIVE_PROFILE } else { PROFILE },
        "workload_id": started.config.workload_id,
        "generation": started.config.policy.generation,
        "startup_id": started.startup_id,
    });
    let mut out = std::io::stdout().lock();
    let written = |r: std::io::Result<()>| r.map_err(|e| io(format!("cannot write stdout: {e}")));
    written(writeln!(out, "{ready}").and_then(|_| out.flush()))?;
    let mut input = std::io::stdin().lock();
    let mut fences = Fences::default();
    let mut memory = task::Memory::default();
    loop {
        let line = match read_line(&mut input) {
            Ok(Some(line)) => line,
            Ok(None) => return Ok(()),
            Err(e) => return Err(io(format!("cannot read stdin: {e}"))),
        };
        let reply = handle(&mut started, &mut fences, &mut memory, profile, line);
        written(writeln!(out, "{reply}").and_then(|_| out.flush()))?;
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
