//! The declared requests: every operation and rule check with the argument keys it takes, and
//! the refusal of any other key (`UNKNOWN_KEY`) before anything is read or written.

use agent_intercom_core::{Error, ErrorCode};
use serde_json::{Map, Value};

/// An argument an operation or rule check takes: its key, and for an object of arguments (such
/// as `cost.record`'s `pricing`) the keys that object takes in turn. A value without `fields` is
/// taken whole (`metadata` is data, not arguments: any JSON).
#[derive(Clone, Copy, Debug)]
pub struct Arg {
    /// The key.
    pub key: &'static str,
    /// For an object of arguments, the keys it takes.
    pub fields: Option<&'static [Arg]>,
}

/// An operation or rule check and every argument key it takes; any other key is refused
/// (`UNKNOWN_KEY`) before anything is read or written.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// The operation's name.
    pub name: &'static str,
    /// Its arguments.
    pub args: &'static [Arg],
}

const fn arg(key: &'static str) -> Arg {
    Arg { key, fields: None }
}

const fn object(key: &'static str, fields: &'static [Arg]) -> Arg {
    Arg {
        key,
        fields: Some(fields),
    }
}

const fn takes(name: &'static str, args: &'static [Arg]) -> Request {
    Request { name, args }
}

const fn names<const N: usize>(table: &[Request; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = table[i].name;
        i += 1;
    }
    out
}

const PRICING: &[Arg] = &[
    arg("input_per_million_micros"),
    arg("output_per_million_micros"),
    arg("cached_per_million_micros"),
];

const STORE_TABLE: [Request; 15] = [
    takes(
        "register",
        &[arg("agent"), arg("project_root"), arg("team")],
    ),
    takes(
        "post",
        &[
            arg("from"),
            arg("content"),
            arg("to"),
            arg("category"),
            arg("priority"),
            arg("privacy"),
            arg("metadata"),
            arg("task_id"),
            arg("project_root"),
            arg("ttl_hours"),
        ],
    ),
    takes("unread", &[arg("agent"), arg("project_root")]),
    takes(
        "list",
        &[
            arg("agent"),
            arg("project_root"),
            arg("category"),
            arg("from"),
            arg("limit"),
            arg("after"),
        ],
    ),
    takes(
        "task.create",
        &[
            arg("creator"),
            arg("title"),
            arg("assignee"),
            arg("project_root"),
        ],
    ),
    takes("task.get", &[arg("id"), arg("agent")]),
    takes(
        "task.transition",
        &[arg("id"), arg("by"), arg("to"), arg("reason")],
    ),
    takes("task.history", &[arg("id"), arg("agent")]),
    takes(
        "task.artifact",
        &[arg("id"), arg("by"), arg("name"), arg("content")],
    ),
    takes("task.artifacts", &[arg("id"), arg("agent")]),
    takes(
        "rate.take",
        &[
            arg("agent"),
            arg("tool"),
            arg("global_per_min"),
            arg("agent_per_min"),
            arg("tool_per_min"),
        ],
    ),
    takes(
        "cost.record",
        &[
            arg("agent"),
            arg("tool"),
            arg("input_tokens"),
            arg("output_tokens"),
            arg("cached_tokens"),
            object("pricing", PRICING),
        ],
    ),
    takes("cost.list", &[]),
    takes(
        "export",
        &[
            arg("agent"),
            arg("project_root"),
            arg("limit"),
            arg("full"),
            arg("path"),
        ],
    ),
    takes(
        "events",
        &[
            arg("agent"),
            arg("project_root"),
            arg("after"),
            arg("kinds"),
            arg("actors"),
            arg("targets"),
            arg("limit"),
        ],
    ),
];

const CHECK_TABLE: [Request; 7] = [
    takes(
        "check.visible",
        &[
            object(
                "message",
                &[
                    arg("from"),
                    arg("to"),
                    arg("privacy"),
                    arg("sender_team"),
                    arg("project_root"),
                    arg("expires_at"),
                ],
            ),
            object("reader", &[arg("agent"), arg("team"), arg("project_root")]),
            arg("now"),
        ],
    ),
    takes("check.ttl", &[arg("ttl_hours")]),
    takes("check.transition", &[arg("from"), arg("to")]),
    takes("check.addressing", &[arg("privacy"), arg("to")]),
    takes("check.redact", &[arg("text"), arg("project_root")]),
    takes("check.rate", &[arg("per_minute"), arg("takes")]),
    takes(
        "check.task_read",
        &[
            object("task", &[arg("creator"), arg("assignee")]),
            arg("agent"),
        ],
    ),
];

/// The store operations and the argument keys each takes.
pub const STORE_REQUESTS: &[Request] = &STORE_TABLE;
/// The rule checks and the argument keys each takes.
pub const CHECK_REQUESTS: &[Request] = &CHECK_TABLE;

/// The operations, for help texts and tests.
pub const OPERATIONS: &[&str] = &names(&STORE_TABLE);

/// The rule checks, which need no store: the contract's pure rules, for adapters and the
/// vector runners in C and Node.
pub const CHECKS: &[&str] = &names(&CHECK_TABLE);

/// The operation or rule check called `name`, with the keys it takes.
pub fn request_of(name: &str) -> Option<&'static Request> {
    STORE_REQUESTS
        .iter()
        .chain(CHECK_REQUESTS)
        .find(|r| r.name == name)
}

/// Keys that differ only in case or separators, or where one begins the other (`ttl` for
/// `ttl_hours`): the likely intended key, for the refusal's message.
fn close_to(given: &str, key: &str) -> bool {
    let norm = |s: &str| {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    let (g, k) = (norm(given), norm(key));
    g == k || (g.len() >= 3 && k.starts_with(&g)) || (k.len() >= 3 && g.starts_with(&k))
}

/// Refuses every key of `map` that `args` does not declare, and checks nested objects of
/// arguments the same way. `what` names the object ("post", "cost.record's pricing").
pub(super) fn refuse_unknown_keys(
    map: &Map<String, Value>,
    args: &[Arg],
    what: &str,
) -> Result<(), Error> {
    let unknown: Vec<&String> = map
        .keys()
        .filter(|k| !args.iter().any(|a| a.key == k.as_str()))
        .collect();
    if !unknown.is_empty() {
        let quoted = |k: &String| format!("{k:?}");
        let hints: Vec<&str> = unknown
            .iter()
            .flat_map(|u| args.iter().filter(|a| close_to(u, a.key)).map(|a| a.key))
            .collect();
        let takes = if args.is_empty() {
            "it takes no arguments".to_string()
        } else {
            format!(
                "it takes: {}",
                args.iter().map(|a| a.key).collect::<Vec<_>>().join(", ")
            )
        };
        return Err(Error::new(
            ErrorCode::UnknownKey,
            format!(
                "{what} does not take {}{}; {takes}",
                unknown
                    .iter()
                    .map(|k| quoted(k))
                    .collect::<Vec<_>>()
                    .join(", "),
                if hints.is_empty() {
                    String::new()
                } else {
                    format!(" (did you mean {}?)", hints.join(", "))
                },
            ),
        ));
    }
    for a in args {
        if let (Some(fields), Some(Value::Object(inner))) = (a.fields, map.get(a.key)) {
            refuse_unknown_keys(inner, fields, &format!("{what}'s {}", a.key))?;
        }
    }
    Ok(())
}

/// Whether `op` is a rule check (see [`CHECKS`]), which needs no store.
pub fn is_check(op: &str) -> bool {
    op.starts_with("check.")
}

pub(super) const OPTION_ARGS: [Arg; 4] = [
    arg("per_project_cap"),
    arg("per_recipient_cap"),
    arg("max_content_bytes"),
    arg("allow_full_export"),
];

pub(super) const OPTIONS: Request = takes("the store configuration", &OPTION_ARGS);

const fn keys<const N: usize>(args: &[Arg; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = args[i].key;
        i += 1;
    }
    out
}

/// The keys of [`config`](super::config)'s object (the fields of [`Config`](crate::Config)).
pub const OPTION_KEYS: &[&str] = &keys(&OPTION_ARGS);
