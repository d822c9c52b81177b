//! `agent-intercom pad`: one scratchpad operation, or JSON lines of them on stdin.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use agent_intercom_core::{Error, ErrorCode};
use agent_intercom_scratchpad::api::{self, CHECKS, OPERATIONS};
use agent_intercom_scratchpad::{Store, SystemClock};
use clap::Args;
use serde_json::Value;

use crate::fail::{Outcome, io};

#[derive(Args)]
#[command(group = clap::ArgGroup::new("what").required(true).args(["op", "stdin"]))]
pub struct PadArgs {
    /// Store (default $AGENT_INTERCOM_SCRATCHPAD, else <agent-dir>/scratchpad.sqlite); its
    /// directory must exist
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Store limits as a JSON object (docs/scratchpad.md)
    #[arg(long, value_name = "JSON")]
    config: Option<String>,
    /// Read JSON lines {"op":..,"args":{..},"id":..} from stdin; answer one {"ok":..} line each
    #[arg(long, conflicts_with_all = ["op", "args"])]
    stdin: bool,
    /// The operation (listed below)
    #[arg(value_name = "OP")]
    op: Option<String>,
    /// Its arguments, a JSON object
    #[arg(value_name = "JSON", allow_hyphen_values = true)]
    args: Option<String>,
}

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

/// The help with the operations from the scratchpad's own table, never typed here.
pub fn help(command: clap::Command) -> clap::Command {
    command.after_help(format!(
        "Operations:\n{}\nRule checks (they need no store):\n{}\nThe arguments of each: \
         docs/scratchpad.md",
        wrapped("  ", OPERATIONS),
        wrapped("  ", CHECKS)
    ))
}

pub fn run(args: PadArgs) -> Outcome {
    let env = api::process_env;
    let op = args.op.as_deref().unwrap_or("--stdin");
    let arguments = api::parse(args.args.as_deref(), "the arguments")?;
    let mut store = None;
    // Rule checks need no store, so none is opened for them.
    if args.stdin || !api::is_check(op) {
        let config =
            api::parse(args.config.as_deref(), "--config").and_then(|c| api::config(&c))?;
        let place = crate::paths::store(args.db.as_deref());
        place.ready()?;
        store = Some(Store::open(
            &place.path,
            config,
            std::sync::Arc::new(SystemClock),
        )?);
    }
    if let (Some(store), true) = (store.as_mut(), args.stdin) {
        return lines(store, &env);
    }
    let no_store = || Error::new(ErrorCode::Internal, "no store");
    let result = api::request(store.as_mut(), op, &arguments, &env, no_store)?;
    println!("{result}");
    Ok(())
}

/// The JSON-lines loop: one response line per request line, in order; a bad line gets an error
/// response and the loop goes on. Store-level failures (I/O, corruption) are reported the same way.
fn lines(store: &mut Store, env: &dyn Fn(&str) -> Option<String>) -> Outcome {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in stdin.lock().split(b'\n') {
        let line = line.map_err(|e| io(format!("cannot read stdin: {e}")))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let response = match request_of(&line) {
            Ok((id, op, args)) => respond(id, api::handle(store, &op, &args, env)),
            Err(e) => respond(Value::Null, Err(e)),
        };
        writeln!(out, "{response}")
            .and_then(|_| out.flush())
            .map_err(|e| io(format!("cannot write stdout: {e}")))?;
    }
    Ok(())
}

type Request = (Value, String, Value);

fn request_of(line: &[u8]) -> Result<Request, Error> {
    let text = std::str::from_utf8(line).map_err(|e| {
        Error::new(
            ErrorCode::InvalidUtf8,
            format!(
                "request line is not valid UTF-8 (invalid byte at offset {})",
                e.valid_up_to()
            ),
        )
    })?;
    let mut value = api::parse(Some(text), "the request line")?;
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
    let id = obj.remove("id").unwrap_or(Value::Null);
    let Some(Value::String(op)) = obj.remove("op") else {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "op must be a string",
        ));
    };
    Ok((id, op, obj.remove("args").unwrap_or(Value::Null)))
}

fn respond(id: Value, result: Result<Value, Error>) -> Value {
    let mut response = match result {
        Ok(v) => serde_json::json!({ "ok": true, "result": v }),
        Err(e) => serde_json::json!({
            "ok": false,
            "error": { "code": e.code().as_str(), "message": e.message() },
        }),
    };
    if !id.is_null() {
        response["id"] = id;
    }
    response
}
