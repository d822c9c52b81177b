//! One JSON entry point over the store, shared by the CLI (`agent-intercom pad`), the C ABI
//! (`aic_pad_request`) and the Node package (`./scratchpad`): an operation name and a JSON object
//! of arguments in, a JSON value out, failures as stable error codes.

use serde_json::{Map, Value, json};

use crate::{Config, EventFilter, NewMessage, Pricing, RateDecision, RateLimits, Store, Usage};
use agent_intercom_core::canonical::MAX_SAFE_INTEGER;
use agent_intercom_core::{Error, ErrorCode};

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

fn bad(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
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
fn refuse_unknown_keys(map: &Map<String, Value>, args: &[Arg], what: &str) -> Result<(), Error> {
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

#[cfg(test)]
thread_local! {
    /// Every key the handlers read, with its path ("pricing.input_per_million_micros").
    static READ: std::cell::RefCell<std::collections::BTreeSet<String>> = Default::default();
}

fn empty() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

/// The arguments of one request: only the keys its [`Request`] declares can be present (the rest
/// were refused), and only declared keys may be read (a debug assertion). `null` counts as absent.
struct Args<'a> {
    map: &'a Map<String, Value>,
    declared: &'static [Arg],
    /// The path of a nested object ("pricing"), for messages.
    at: &'static str,
}

impl<'a> Args<'a> {
    /// The arguments of `request` from `args` (an object, or `null` for none), refusing
    /// undeclared keys at any depth.
    fn of(request: &'static Request, args: &'a Value) -> Result<Args<'a>, Error> {
        let map = match args {
            Value::Object(m) => m,
            Value::Null => empty(),
            _ => return Err(bad("arguments must be a JSON object")),
        };
        refuse_unknown_keys(map, request.args, request.name)?;
        Ok(Args {
            map,
            declared: request.args,
            at: "",
        })
    }

    fn label(&self, key: &str) -> String {
        if self.at.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.at)
        }
    }

    fn declared(&self, key: &str) -> &'static Arg {
        let found = self.declared.iter().find(|a| a.key == key);
        debug_assert!(
            found.is_some(),
            "the handler reads {} without declaring it",
            self.label(key)
        );
        #[cfg(test)]
        READ.with(|r| r.borrow_mut().insert(self.label(key)));
        found.unwrap_or(&Arg {
            key: "",
            fields: None,
        })
    }

    /// The value of `key`; `None` when absent or `null`.
    fn value(&self, key: &str) -> Option<&'a Value> {
        self.declared(key);
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// A nested object of arguments (absent: empty, when `required` is false).
    fn object(&self, key: &str, required: bool) -> Result<Args<'a>, Error> {
        let declared = self.declared(key);
        let map = match self.value(key) {
            Some(Value::Object(m)) => m,
            None if !required => empty(),
            _ => return Err(bad(format!("{} must be an object", self.label(key)))),
        };
        Ok(Args {
            map,
            declared: declared.fields.unwrap_or(&[]),
            at: declared.key,
        })
    }

    fn opt_str(&self, key: &str) -> Result<Option<&'a str>, Error> {
        match self.value(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(bad(format!("{} must be a string", self.label(key)))),
        }
    }
    fn str(&self, key: &str) -> Result<&'a str, Error> {
        self.opt_str(key)?
            .ok_or_else(|| bad(format!("{} is required", self.label(key))))
    }
    /// A name (an agent, a team, a tool, a task): a string that is not empty, since the empty
    /// name would be taken as a name nobody has.
    fn opt_name(&self, key: &str) -> Result<Option<&'a str>, Error> {
        match self.opt_str(key)? {
            Some("") => Err(bad(format!(
                "{} must be a non-empty string (omit it, or give null, for none)",
                self.label(key)
            ))),
            other => Ok(other),
        }
    }
    fn name(&self, key: &str) -> Result<&'a str, Error> {
        self.opt_name(key)?
            .ok_or_else(|| bad(format!("{} is required", self.label(key))))
    }
    fn opt_int(&self, key: &str) -> Result<Option<i64>, Error> {
        match self.value(key) {
            None => Ok(None),
            // Whole numbers written as floats (1e3, or what a C JSON printer makes of a large
            // integer) count; beyond the i64 range they saturate, so range checks still refuse
            // them with their own code.
            Some(v) => match (v.as_i64(), v.as_f64()) {
                (Some(i), _) => Ok(Some(i)),
                (None, Some(f)) if f.is_finite() && f.fract() == 0.0 => Ok(Some(f as i64)),
                _ => Err(bad(format!("{} must be an integer", self.label(key)))),
            },
        }
    }
    /// A time to live in hours: absent is the default; any number that is not a whole number of
    /// hours from 1 to 720 (`0.5` too) is `INVALID_TTL`; another type is `INVALID_ARGUMENT`.
    fn ttl_hours(&self, key: &str) -> Result<u32, Error> {
        use agent_intercom_core::scratchpad::{ttl_hours, ttl_hours_of_number};
        match self.value(key) {
            None => ttl_hours(None),
            Some(Value::Number(n)) => match n.as_i64() {
                Some(h) => ttl_hours(Some(h)),
                None => ttl_hours_of_number(n.as_f64().unwrap_or(f64::NAN)),
            },
            Some(_) => Err(bad(format!(
                "{} must be a number of hours",
                self.label(key)
            ))),
        }
    }
    fn int(&self, key: &str) -> Result<i64, Error> {
        self.opt_int(key)?
            .ok_or_else(|| bad(format!("{} is required", self.label(key))))
    }
    fn opt_u32(&self, key: &str) -> Result<Option<u32>, Error> {
        self.opt_int(key)?
            .map(|v| {
                u32::try_from(v).map_err(|_| {
                    bad(format!(
                        "{} must be from 0 to {}",
                        self.label(key),
                        u32::MAX
                    ))
                })
            })
            .transpose()
    }
    /// A count (tokens, prices): 0 when absent, up to 2^53 - 1 (what every JSON reader holds
    /// exactly); beyond is refused, not saturated.
    fn u64_or_zero(&self, key: &str) -> Result<u64, Error> {
        match self.opt_int(key)? {
            None => Ok(0),
            Some(v) if (0..=MAX_SAFE_INTEGER).contains(&v) => Ok(v as u64),
            Some(_) => Err(bad(format!(
                "{} must be a whole number from 0 to {MAX_SAFE_INTEGER}",
                self.label(key)
            ))),
        }
    }
    fn bool(&self, key: &str) -> Result<bool, Error> {
        match self.value(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(bad(format!("{} must be a boolean", self.label(key)))),
        }
    }
    fn array(&self, key: &str) -> Result<Option<&'a Vec<Value>>, Error> {
        match self.value(key) {
            None => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items)),
            Some(_) => Err(bad(format!("{} must be an array", self.label(key)))),
        }
    }
    fn strings(&self, key: &str) -> Result<Vec<String>, Error> {
        self.array(key)?
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| bad(format!("{} must hold strings", self.label(key))))
            })
            .collect()
    }
    fn limit(&self, default: usize) -> Result<usize, Error> {
        Ok(self
            .opt_int("limit")?
            .map(|l| usize::try_from(l).unwrap_or(0))
            .unwrap_or(default))
    }
}

fn message_json(m: &crate::Message) -> Value {
    json!({
        "id": m.id, "from": m.from, "to": m.to, "category": m.category, "priority": m.priority, "privacy": m.privacy,
        "content": m.content, "metadata": m.metadata.as_deref().and_then(|t| serde_json::from_str::<Value>(t).ok()),
        "task_id": m.task_id, "project_root": m.project_root, "created_at": m.created_at, "expires_at": m.expires_at,
    })
}

fn task_json(t: &crate::Task) -> Value {
    json!({ "id": t.id, "creator": t.creator, "assignee": t.assignee, "title": t.title, "state": t.state,
        "project_root": t.project_root, "created_at": t.created_at, "updated_at": t.updated_at })
}

/// Evaluates one rule check (see [`CHECKS`]); no store is involved.
pub fn check(op: &str, args: &Value) -> Result<Value, Error> {
    use agent_intercom_core::scratchpad::{
        self as rules, MessageView, Privacy, ReaderView, TaskState, TaskView,
    };
    let request = request_of(op).filter(|r| is_check(r.name)).ok_or_else(|| {
        bad(format!(
            "unknown check {op:?}; checks: {}",
            CHECKS.join(", ")
        ))
    })?;
    let a = Args::of(request, args)?;
    Ok(match op {
        "check.visible" => {
            let (m, r) = (a.object("message", true)?, a.object("reader", true)?);
            let message = MessageView {
                from: m.str("from")?,
                to: m.opt_str("to")?,
                privacy: Privacy::parse(m.str("privacy")?, "privacy")?,
                sender_team: m.opt_str("sender_team")?,
                project_root: m.opt_str("project_root")?,
                expires_at: m.int("expires_at")?,
            };
            let reader = ReaderView {
                agent: r.str("agent")?,
                team: r.opt_str("team")?,
                project_root: r.opt_str("project_root")?,
            };
            json!({ "visible": rules::visible(&message, &reader, a.int("now")?) })
        }
        "check.ttl" => json!({ "hours": a.ttl_hours("ttl_hours")? }),
        "check.transition" => {
            rules::check_transition(
                TaskState::parse(a.str("from")?, "from")?,
                TaskState::parse(a.str("to")?, "to")?,
            )?;
            json!({ "ok": true })
        }
        "check.addressing" => {
            rules::check_addressing(
                Privacy::parse(a.str("privacy")?, "privacy")?,
                a.opt_str("to")?,
            )?;
            json!({ "ok": true })
        }
        "check.rate" => {
            // One bucket, full at the first take: each take at its time is allowed (and consumes a
            // token) or refused with the wait, rounded up, and consumes nothing.
            let per_minute = a
                .opt_u32("per_minute")?
                .filter(|&n| n >= 1)
                .ok_or_else(|| bad("per_minute is required, at least 1"))?;
            let times = a
                .array("takes")?
                .ok_or_else(|| bad("takes must be an array of times in milliseconds"))?
                .iter()
                .map(|t| t.as_i64().ok_or_else(|| bad("takes must hold integers")))
                .collect::<Result<Vec<_>, _>>()?;
            let out: Vec<Value> = rules::simulate_takes(per_minute, &times)
                .into_iter()
                .map(|r| match r {
                    Ok(()) => json!({ "allowed": true }),
                    Err(wait) => json!({ "allowed": false, "retry_after_ms": wait }),
                })
                .collect();
            Value::Array(out)
        }
        "check.task_read" => {
            let t = a.object("task", true)?;
            let task = TaskView {
                creator: t.str("creator")?,
                assignee: t.opt_str("assignee")?,
            };
            rules::check_task_read(&task, a.str("agent")?)?;
            json!({ "ok": true })
        }
        "check.redact" => {
            json!({ "text": rules::redact(a.str("text")?, a.opt_str("project_root")?) })
        }
        // A test runs every declared request; this is for a table row added without a handler.
        other => {
            return Err(Error::new(
                ErrorCode::Internal,
                format!("{other} is declared in CHECK_TABLE but has no handler"),
            ));
        }
    })
}

/// Whether `op` is a rule check (see [`CHECKS`]), which needs no store.
pub fn is_check(op: &str) -> bool {
    op.starts_with("check.")
}

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
    Ok(match op {
        "register" => {
            store.register_agent(a.name("agent")?, a.opt_name("project_root")?, a.opt_name("team")?)?;
            json!({ "ok": true })
        }
        "post" => {
            let metadata = a.value("metadata").map(Value::to_string);
            let posted = store.post(&NewMessage {
                from: a.name("from")?.to_string(),
                to: a.opt_str("to")?.map(str::to_string),
                category: a.opt_str("category")?.unwrap_or("note").to_string(),
                priority: a.opt_str("priority")?.map(str::to_string),
                privacy: a.opt_str("privacy")?.map(str::to_string),
                content: a.str("content")?.to_string(),
                metadata,
                task_id: a.opt_name("task_id")?.map(str::to_string),
                project_root: a.opt_name("project_root")?.map(str::to_string),
                ttl_hours: Some(a.ttl_hours("ttl_hours")?.into()),
            })?;
            json!({ "id": posted.id, "expires_at": posted.expires_at, "evicted": posted.evicted })
        }
        "unread" => Value::Array(store.read_unread(a.name("agent")?, a.opt_name("project_root")?)?.iter().map(message_json).collect()),
        "list" => {
            let page = store.list(a.name("agent")?, a.opt_name("project_root")?, a.opt_str("category")?, a.opt_name("from")?, a.limit(50)?, a.opt_str("after")?)?;
            json!({ "messages": page.messages.iter().map(message_json).collect::<Vec<_>>(), "next": page.next })
        }
        "task.create" => task_json(&store.create_task(a.name("creator")?, a.opt_name("assignee")?, a.str("title")?, a.opt_name("project_root")?)?),
        "task.get" => task_json(&store.task(a.str("id")?, a.name("agent")?)?),
        "task.transition" => task_json(&store.transition_task(a.str("id")?, a.name("by")?, a.str("to")?, a.opt_str("reason")?)?),
        "task.history" => Value::Array(
            store
                .task_history(a.str("id")?, a.name("agent")?)?
                .iter()
                .map(|t| json!({ "from": t.from, "to": t.to, "by": t.by, "reason": t.reason, "at": t.at }))
                .collect(),
        ),
        "task.artifact" => {
            store.add_artifact(a.str("id")?, a.name("by")?, a.str("name")?, a.str("content")?)?;
            json!({ "ok": true })
        }
        "task.artifacts" => Value::Array(
            store.artifacts(a.str("id")?, a.name("agent")?)?.iter().map(|x| json!({ "by": x.by, "name": x.name, "content": x.content, "at": x.at })).collect(),
        ),
        "rate.take" => {
            let from_env = RateLimits::from_env(env)?;
            let limits = RateLimits {
                global_per_min: a.opt_u32("global_per_min")?.or(from_env.global_per_min),
                agent_per_min: a.opt_u32("agent_per_min")?.or(from_env.agent_per_min),
                tool_per_min: a.opt_u32("tool_per_min")?.or(from_env.tool_per_min),
            };
            match store.take_rate(a.name("agent")?, a.name("tool")?, &limits)? {
                RateDecision::Allowed => json!({ "allowed": true }),
                RateDecision::Refused { retry_after_ms, levels } => json!({ "allowed": false, "retry_after_ms": retry_after_ms, "levels": levels }),
            }
        }
        "cost.record" => {
            let p = a.object("pricing", false)?;
            let pricing = Pricing {
                input_per_million_micros: p.u64_or_zero("input_per_million_micros")?,
                output_per_million_micros: p.u64_or_zero("output_per_million_micros")?,
                cached_per_million_micros: p.u64_or_zero("cached_per_million_micros")?,
            };
            let usage = Usage { input_tokens: a.u64_or_zero("input_tokens")?, output_tokens: a.u64_or_zero("output_tokens")?, cached_tokens: a.u64_or_zero("cached_tokens")? };
            json!({ "cost_micros": store.record_cost(a.name("agent")?, a.name("tool")?, &usage, &pricing)? })
        }
        "cost.list" => Value::Array(
            store
                .costs()?
                .iter()
                .map(|c| {
                    json!({ "agent": c.agent, "tool": c.tool, "input_tokens": c.usage.input_tokens, "output_tokens": c.usage.output_tokens,
                        "cached_tokens": c.usage.cached_tokens, "calls": c.calls, "cost_micros": c.cost_micros })
                })
                .collect(),
        ),
        "export" => {
            let (agent, root, limit, full) = (a.name("agent")?, a.opt_name("project_root")?, a.limit(200)?, a.bool("full")?);
            match a.opt_str("path")? {
                Some(path) => {
                    store.export_to_file(std::path::Path::new(path), agent, root, limit, full)?;
                    json!({ "written": path })
                }
                None => serde_json::from_str(&store.export(agent, root, limit, full)?).map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))?,
            }
        }
        "events" => {
            let filter = EventFilter { kinds: a.strings("kinds")?, actors: a.strings("actors")?, targets: a.strings("targets")? };
            let (events, cursor) = store.poll_events(a.name("agent")?, a.opt_name("project_root")?, a.opt_int("after")?.unwrap_or(0), &filter, a.limit(100)?)?;
            json!({
                "events": events.iter().map(|e| json!({ "seq": e.seq, "kind": e.kind, "actor": e.actor, "target": e.target, "ref_id": e.ref_id, "at": e.at })).collect::<Vec<_>>(),
                "cursor": cursor,
            })
        }
        // A test runs every declared request; this is for a table row added without a handler.
        other => {
            return Err(Error::new(
                ErrorCode::Internal,
                format!("{other} is declared in STORE_TABLE but has no handler"),
            ));
        }
    })
}

const OPTION_ARGS: [Arg; 4] = [
    arg("per_project_cap"),
    arg("per_recipient_cap"),
    arg("max_content_bytes"),
    arg("allow_full_export"),
];

const OPTIONS: Request = takes("the store configuration", &OPTION_ARGS);

const fn keys<const N: usize>(args: &[Arg; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = args[i].key;
        i += 1;
    }
    out
}

/// The keys of [`config`]'s object (the fields of [`Config`]).
pub const OPTION_KEYS: &[&str] = &keys(&OPTION_ARGS);

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every argument of `args` at any depth, as read paths ("pricing.input_per_million_micros").
    fn declared(args: &[Arg], at: &str, out: &mut std::collections::BTreeSet<String>) {
        for a in args {
            let path = if at.is_empty() {
                a.key.to_string()
            } else {
                format!("{at}.{}", a.key)
            };
            if let Some(fields) = a.fields {
                declared(fields, a.key, out);
            }
            out.insert(path);
        }
    }

    /// One request giving every argument it takes, valid enough that the handler reads them all.
    fn full_args(name: &str, dir: &std::path::Path) -> Value {
        match name {
            "register" => json!({"agent": "a", "project_root": "/p", "team": "t"}),
            "post" => json!({"from": "a", "content": "c", "to": "b", "category": "note",
                "priority": "high", "privacy": "private", "metadata": {"k": 1}, "task_id": "t1",
                "project_root": "/p", "ttl_hours": 2}),
            "unread" => json!({"agent": "b", "project_root": "/p"}),
            "list" => json!({"agent": "b", "project_root": "/p", "category": "note", "from": "a",
                "limit": 5, "after": null}),
            "task.create" => {
                json!({"creator": "a", "title": "t", "assignee": "b", "project_root": "/p"})
            }
            "task.get" | "task.history" | "task.artifacts" => {
                json!({"id": "missing", "agent": "a"})
            }
            "task.transition" => {
                json!({"id": "missing", "by": "a", "to": "working", "reason": "r"})
            }
            "task.artifact" => json!({"id": "missing", "by": "a", "name": "n", "content": "c"}),
            "rate.take" => json!({"agent": "a", "tool": "t", "global_per_min": 5,
                "agent_per_min": 5, "tool_per_min": 5}),
            "cost.record" => {
                json!({"agent": "a", "tool": "t", "input_tokens": 1, "output_tokens": 1,
                "cached_tokens": 1, "pricing": {"input_per_million_micros": 1,
                "output_per_million_micros": 1, "cached_per_million_micros": 1}})
            }
            "cost.list" => json!({}),
            "export" => json!({"agent": "a", "project_root": "/p", "limit": 5, "full": false,
                "path": dir.join("export.json")}),
            "events" => json!({"agent": "a", "project_root": "/p", "after": 0,
                "kinds": ["message.posted"], "actors": ["a"], "targets": ["b"], "limit": 5}),
            "check.visible" => json!({"message": {"from": "a", "to": "b", "privacy": "team",
                "sender_team": "t", "project_root": "/p", "expires_at": 9},
                "reader": {"agent": "b", "team": "t", "project_root": "/p"}, "now": 1}),
            "check.ttl" => json!({"ttl_hours": 3}),
            "check.transition" => json!({"from": "submitted", "to": "working"}),
            "check.addressing" => json!({"privacy": "private", "to": "b"}),
            "check.redact" => json!({"text": "x", "project_root": "/p"}),
            "check.rate" => json!({"per_minute": 1, "takes": [0, 1]}),
            "check.task_read" => json!({"task": {"creator": "a", "assignee": "b"}, "agent": "b"}),
            other => panic!("add {other} to full_args"),
        }
    }

    #[test]
    fn every_declared_key_is_read_and_only_declared_keys_are() {
        // Reading an undeclared key panics (debug assertion); here each request also reads every
        // key it declares, so no declared key is silently ignored.
        let dir = std::env::temp_dir().join(format!("aic-api-keys-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut store = Store::open(
            &dir.join("pad.sqlite"),
            Config::default(),
            std::sync::Arc::new(crate::SystemClock),
        )
        .unwrap();
        let options = || {
            json!({"per_project_cap": 1, "per_recipient_cap": 1,
            "max_content_bytes": 1, "allow_full_export": true})
        };
        for (request, args) in STORE_REQUESTS
            .iter()
            .chain(CHECK_REQUESTS)
            .map(|r| (r, full_args(r.name, &dir)))
            .chain([(&OPTIONS, options())])
        {
            READ.with(|r| r.borrow_mut().clear());
            let result = if request.name == OPTIONS.name {
                config(&args).map(|_| Value::Null)
            } else {
                handle(&mut store, request.name, &args, &|_| None)
            };
            if let Err(e) = &result {
                assert_ne!(
                    e.code(),
                    ErrorCode::UnknownKey,
                    "{}: {}",
                    request.name,
                    e.message()
                );
            }
            let mut want = std::collections::BTreeSet::new();
            declared(request.args, "", &mut want);
            let read = READ.with(|r| r.borrow().clone());
            assert_eq!(read, want, "{}: keys read vs keys declared", request.name);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unpaired_surrogates_are_refused_naming_where_they_are() {
        let cases = [
            (r#"{"from":"a","content":"a\ud800b"}"#, "content", 0xd800),
            (r#"{"content":"\ud800\u0041"}"#, "content", 0xd800),
            (r#"{"content":"x\udc00"}"#, "content", 0xdc00),
            (
                r#"{"a":1,"m":{"n":["x","\\\"",{"k":"\udfff"}]}}"#,
                "m.n[2].k",
                0xdfff,
            ),
            (r#"{"m":{"\ud83d":1}}"#, "a key of m", 0xd83d),
            (r#""\ud800""#, "the value", 0xd800),
        ];
        for (text, at, unit) in cases {
            let err = parse(Some(text), "the arguments").unwrap_err();
            assert_eq!(
                err.code(),
                ErrorCode::UnpairedSurrogate,
                "{text}: {}",
                err.message()
            );
            assert_eq!(
                unpaired_surrogate(text),
                Some((at.to_string(), unit)),
                "{text}"
            );
            assert!(
                err.message()
                    .starts_with(&format!("the arguments: {at} holds")),
                "{}",
                err.message()
            );
        }
        // A pair is one character; other faults stay INVALID_JSON, even before a lone surrogate.
        assert_eq!(
            parse(Some(r#"{"c":"\ud83d\ude00"}"#), "x").unwrap(),
            json!({"c": "\u{1F600}"})
        );
        for text in [r#"{"c":"\u12"}"#, r#"{"c": nope, "d":"\ud800"}"#, "{"] {
            assert_eq!(
                parse(Some(text), "x").unwrap_err().code(),
                ErrorCode::InvalidJson,
                "{text}"
            );
        }
    }

    #[test]
    fn the_tables_name_each_request_once() {
        let mut seen = std::collections::BTreeSet::new();
        for r in STORE_REQUESTS.iter().chain(CHECK_REQUESTS) {
            assert!(seen.insert(r.name), "{} twice", r.name);
            assert_eq!(is_check(r.name), CHECKS.contains(&r.name), "{}", r.name);
            let mut keys = std::collections::BTreeSet::new();
            for a in r.args {
                assert!(keys.insert(a.key), "{}: {} twice", r.name, a.key);
            }
        }
        assert_eq!(OPTION_KEYS, OPTION_ARGS.map(|a| a.key));
    }
}
