//! One JSON entry point over the store, shared by the CLI (`agent-intercom pad`), the C ABI
//! (`aic_pad_request`) and the Node package (`./scratchpad`): an operation name and a JSON object
//! of arguments in, a JSON value out, failures as stable error codes.
//!
//! The requests and the keys each takes are declared in one table (`table`); the arguments are
//! read through typed accessors that only reach declared keys (`args`); each store operation
//! (`ops`) and each rule check (`checks`) is one function.

mod args;
mod checks;
mod ops;
mod table;
#[cfg(test)]
mod tests;

use serde_json::Value;

use crate::{Config, Store};
use agent_intercom_core::canonical::MAX_SAFE_INTEGER;
use agent_intercom_core::{Error, ErrorCode};
use args::{Args, bad};
use table::OPTIONS;

pub use checks::check;
pub use table::{
    Arg, CHECK_REQUESTS, CHECKS, OPERATIONS, OPTION_KEYS, Request, STORE_REQUESTS, is_check,
    request_of,
};

/// Arguments or options as JSON text: absent or blank is none (`null`); anything else must be
/// JSON (`INVALID_JSON`, naming `what`). Every surface reads its text through this.
///
/// An escaped unpaired UTF-16 surrogate (`"a\ud800b"`, what `JSON.stringify` makes of a sliced
/// emoji) is `UNPAIRED_SURROGATE`, naming where it is (`content`, `metadata.n[1]`): the store
/// holds UTF-8 text, which cannot hold half a character, and replacing it would change the text
/// silently.
pub fn parse(text: Option<&str>, what: &str) -> Result<Value, Error> {
    match text {
        None => Ok(Value::Null),
        Some(t) if t.trim().is_empty() => Ok(Value::Null),
        Some(t) => serde_json::from_str(t).map_err(|e| {
            // serde_json's words for an unpaired surrogate escape; the scan finds where it is.
            let message = e.to_string();
            let lone = message.contains("surrogate") || message.contains("end of hex escape");
            match lone.then(|| unpaired_surrogate(t)).flatten() {
                Some((at, unit)) => Error::new(
                    ErrorCode::UnpairedSurrogate,
                    format!(
                        "{what}: {at} holds an unpaired UTF-16 surrogate (\\u{unit:04x}), which \
                         UTF-8 text cannot hold; send whole characters"
                    ),
                ),
                None => Error::new(
                    ErrorCode::InvalidJson,
                    format!("{what} is not valid JSON: {message}"),
                ),
            }
        }),
    }
}

/// The first escaped unpaired surrogate of a JSON text that is valid up to it: where it is (a
/// path such as `content`, `metadata.n[1]`, or `a key of metadata`) and the code unit.
fn unpaired_surrogate(text: &str) -> Option<(String, u16)> {
    enum Frame {
        Object { key: String, wants_key: bool },
        Array(usize),
    }
    let path = |stack: &[Frame]| {
        let mut out = String::new();
        for frame in stack {
            match frame {
                Frame::Object { key, .. } => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(key);
                }
                Frame::Array(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    };
    let hex = |at: usize| {
        text.get(at..at + 4)
            .and_then(|h| u16::from_str_radix(h, 16).ok())
    };
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => stack.push(Frame::Object {
                key: String::new(),
                wants_key: true,
            }),
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array(n)) => *n += 1,
                Some(Frame::Object { wants_key, .. }) => *wants_key = true,
                None => {}
            },
            b':' => {
                if let Some(Frame::Object { wants_key, .. }) = stack.last_mut() {
                    *wants_key = false;
                }
            }
            b'"' => {
                let is_key = matches!(
                    stack.last(),
                    Some(Frame::Object {
                        wants_key: true,
                        ..
                    })
                );
                let start = i + 1;
                i = start;
                let mut lone = None;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        if bytes.get(i + 1) == Some(&b'u') {
                            let unit = hex(i + 2)?;
                            i += 6;
                            if (0xD800..0xDC00).contains(&unit) {
                                let next = (bytes.get(i) == Some(&b'\\')
                                    && bytes.get(i + 1) == Some(&b'u'))
                                .then(|| hex(i + 2))
                                .flatten();
                                match next {
                                    Some(low) if (0xDC00..0xE000).contains(&low) => i += 6,
                                    _ => lone = lone.or(Some(unit)),
                                }
                            } else if (0xDC00..0xE000).contains(&unit) {
                                lone = lone.or(Some(unit));
                            }
                            continue;
                        }
                        i += 1;
                    }
                    i += 1;
                }
                if let Some(unit) = lone {
                    // A key is named by the object it belongs to, the path without its own frame.
                    let here = path(&stack[..stack.len() - usize::from(is_key)]);
                    let at = match (is_key, here.is_empty()) {
                        (true, true) => "a key".to_string(),
                        (true, false) => format!("a key of {here}"),
                        (false, true) => "the value".to_string(),
                        (false, false) => here,
                    };
                    return Some((at, unit));
                }
                if is_key && let Some(Frame::Object { key, .. }) = stack.last_mut() {
                    // Keys are shown as written (escapes and all): good enough to find one.
                    *key = text[start..i.min(text.len())].to_string();
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The process environment as `handle` reads it (`LEAN_CTX_RATE_LIMIT_*_PER_MIN`): a variable
/// that is set but not valid Unicode is passed on as text that the reader refuses, naming the
/// variable, rather than taken as unset (which would mean no limit).
pub fn process_env(key: &str) -> Option<String> {
    std::env::var_os(key).map(|v| v.to_string_lossy().into_owned())
}

/// One request from any surface: a rule check runs without a store; a store operation needs
/// `store`, and fails with `no_store()` without one.
pub fn request(
    store: Option<&mut Store>,
    op: &str,
    args: &Value,
    env: &dyn Fn(&str) -> Option<String>,
    no_store: impl FnOnce() -> Error,
) -> Result<Value, Error> {
    if is_check(op) {
        return check(op, args);
    }
    handle(store.ok_or_else(no_store)?, op, args, env)
}

/// Handles one request. `env` supplies rate limits that `rate.take` does not name
/// (`LEAN_CTX_RATE_LIMIT_*_PER_MIN` / `LCTX_...`).
pub fn handle(
    store: &mut Store,
    op: &str,
    args: &Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Value, Error> {
    if is_check(op) {
        return check(op, args);
    }
    let request = request_of(op).ok_or_else(|| {
        bad(format!(
            "unknown operation {op:?}; operations: {}",
            OPERATIONS.join(", ")
        ))
    })?;
    let a = Args::of(request, args)?;
    match op {
        "register" => ops::register(store, &a),
        "post" => ops::post(store, &a),
        "unread" => ops::unread(store, &a),
        "list" => ops::list(store, &a),
        "task.create" => ops::task_create(store, &a),
        "task.get" => ops::task_get(store, &a),
        "task.transition" => ops::task_transition(store, &a),
        "task.history" => ops::task_history(store, &a),
        "task.artifact" => ops::task_artifact(store, &a),
        "task.artifacts" => ops::task_artifacts(store, &a),
        "rate.take" => ops::rate_take(store, &a, env),
        "cost.record" => ops::cost_record(store, &a),
        "cost.list" => ops::cost_list(store, &a),
        "export" => ops::export(store, &a),
        "events" => ops::events(store, &a),
        // A test runs every declared request; this is for a table row added without a handler.
        other => Err(Error::new(
            ErrorCode::Internal,
            format!("{other} is declared in STORE_TABLE but has no handler"),
        )),
    }
}

/// Store limits from a JSON object (`per_project_cap`, `per_recipient_cap`, `max_content_bytes`,
/// `allow_full_export`); absent (or `null`) keys keep the defaults, unknown keys are refused
/// (`UNKNOWN_KEY`).
pub fn config(options: &Value) -> Result<Config, Error> {
    let a = Args::of(&OPTIONS, options)?;
    let mut config = Config::default();
    let size = |key: &str, default: usize| -> Result<usize, Error> {
        match a.opt_int(key)? {
            None => Ok(default),
            Some(v) if (1..=MAX_SAFE_INTEGER).contains(&v) => {
                usize::try_from(v).map_err(|_| bad(format!("{key} is too large for this machine")))
            }
            Some(_) => Err(bad(format!(
                "{key} must be a whole number from 1 to {MAX_SAFE_INTEGER}"
            ))),
        }
    };
    config.per_project_cap = size("per_project_cap", config.per_project_cap)?;
    config.per_recipient_cap = size("per_recipient_cap", config.per_recipient_cap)?;
    config.max_content_bytes = size("max_content_bytes", config.max_content_bytes)?;
    config.allow_full_export = a.bool("allow_full_export")?;
    Ok(config)
}
