//! The TypeScript contract's validators, authorizers and record parsers, as named operations.
//!
//! Every rule of `@ctliz/agent-intercom-core` 0.2.0 that the Node package exposes (policy, team
//! manifest, canonical readers, Boss records and policies) lives in this crate; the bindings call
//! it by name through [`call_snapshot`] (Node) and [`call_json`] (C), so no rule is written twice.
//! An operation takes its arguments as one array of [`Js`] values and answers [`Out`] or a
//! [`Failure`] that names the JavaScript error class the TypeScript contract throws, with the
//! same path and message.
//!
//! Operation names are `<module>.<function>` in the TypeScript names (`policy.authorize`,
//! `canonical.readString`, `boss.parseBossControlEnvelope`); [`operations`] lists them.

pub mod canonical;
pub mod ops;
pub mod read;
pub mod value;

use std::collections::HashMap;
use std::fmt;
use std::sync::LazyLock;

pub use value::{Js, JsArray, JsObject, JsStr, Lone, Proto};

use crate::error::{Error, ErrorCode};

/// What an operation answers.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    /// `undefined` (a function returning nothing, an optional reader given `undefined`).
    Undefined,
    /// The argument at this index, itself: parsers that return the caller's object after
    /// validating it (the binding hands back the very object it was given).
    Input(usize),
    /// A fresh value, as plain JSON text.
    Json(String),
}

/// Why an operation refused: the JavaScript error class the TypeScript contract throws, with
/// its fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The class name: `ContractValidationError`, `BrokerCapabilityAdvertisementError`,
    /// `TeamManifestError`, `Error` or `TypeError`.
    pub class: &'static str,
    /// `.path` of a contract failure (the message then reads `<path>: <detail>`).
    pub path: Option<String>,
    /// The message without the path.
    pub detail: String,
    /// `.code`, for the classes that carry one.
    pub code: Option<String>,
}

impl Failure {
    /// A `ContractValidationError` at `path`.
    pub fn contract(path: &str, detail: impl Into<String>) -> Failure {
        Failure {
            class: "ContractValidationError",
            path: Some(path.to_string()),
            detail: detail.into(),
            code: None,
        }
    }

    /// A plain `Error` with this message.
    pub fn error(message: impl Into<String>) -> Failure {
        Failure {
            class: "Error",
            path: None,
            detail: message.into(),
            code: None,
        }
    }

    /// A `TypeError` with this message (what JavaScript throws reading a property of
    /// `undefined` or `null`).
    pub fn type_error(message: impl Into<String>) -> Failure {
        Failure {
            class: "TypeError",
            path: None,
            detail: message.into(),
            code: None,
        }
    }

    /// The JavaScript `error.message`: `<path>: <detail>`, or the detail alone.
    pub fn message(&self) -> String {
        match &self.path {
            Some(path) => format!("{path}: {}", self.detail),
            None => self.detail.clone(),
        }
    }

    /// The failure as a JSON object `{class, message, path?, detail, code?}`.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"class\":");
        value::write_json_string(&mut out, self.class);
        out.push_str(",\"message\":");
        value::write_json_string(&mut out, &self.message());
        out.push_str(",\"detail\":");
        value::write_json_string(&mut out, &self.detail);
        if let Some(path) = &self.path {
            out.push_str(",\"path\":");
            value::write_json_string(&mut out, path);
        }
        if let Some(code) = &self.code {
            out.push_str(",\"code\":");
            value::write_json_string(&mut out, code);
        }
        out.push('}');
        out
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for Failure {}

/// An operation's arguments; an argument beyond the end is `undefined`, as in JavaScript.
#[derive(Clone, Copy, Debug)]
pub struct Args<'a>(pub &'a [&'a Js]);

impl<'a> Args<'a> {
    /// The argument at `index`.
    pub fn get(&self, index: usize) -> &'a Js {
        self.0.get(index).copied().unwrap_or(&Js::Undefined)
    }

    /// How many were passed.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none were passed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// One operation.
#[derive(Clone, Copy)]
pub struct Op {
    /// `<module>.<function>`.
    pub name: &'static str,
    /// The implementation.
    pub run: fn(Args<'_>) -> Result<Out, Failure>,
}

impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// Every module's operations.
fn modules() -> [&'static [Op]; 20] {
    use crate::boss;
    [
        ops::OPS,
        canonical::OPS,
        crate::policy::OPS,
        crate::team::OPS,
        boss::policy::OPS,
        boss::feature::OPS,
        boss::wire::OPS,
        boss::service::OPS,
        boss::service::identity::OPS,
        boss::service::recovery::OPS,
        boss::service::restricted::OPS,
        boss::participant::OPS,
        boss::worker::OPS,
        boss::worker_store::OPS,
        boss::credential::OPS,
        boss::authority::OPS,
        boss::supervision::OPS,
        boss::delivery::OPS,
        crate::httpsig::ops::OPS,
        crate::envelope::ops::OPS,
    ]
}

static TABLE: LazyLock<HashMap<&'static str, Op>> = LazyLock::new(|| {
    let mut table = HashMap::new();
    for op in modules().into_iter().flatten() {
        let previous = table.insert(op.name, *op);
        assert!(previous.is_none(), "operation {} is defined twice", op.name);
    }
    table
});

/// The names of every operation, sorted.
pub fn operations() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = TABLE.keys().copied().collect();
    names.sort_unstable();
    names
}

/// Runs `op` over already-read arguments.
pub fn call(op: &str, args: &[&Js]) -> Result<Result<Out, Failure>, Error> {
    let found = TABLE.get(op).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("unknown contract operation {op:?}"),
        )
    })?;
    Ok((found.run)(Args(args)))
}

fn arguments(value: &Js) -> Result<Vec<&Js>, Error> {
    match value {
        Js::Array(array) if !array.extra_keys => array
            .items
            .iter()
            .map(|item| {
                item.as_ref().ok_or_else(|| {
                    Error::new(ErrorCode::InvalidArgument, "the argument list has a hole")
                })
            })
            .collect(),
        _ => Err(Error::new(
            ErrorCode::InvalidArgument,
            "the arguments must be a JSON array",
        )),
    }
}

/// The Node entry: `args` in the snapshot form (see [`value`]); the answer is `u` (undefined),
/// `i<index>` (that argument itself), `j<json>` (a fresh value) or `e<json>` (a [`Failure`]).
pub fn call_snapshot(op: &str, args: &str) -> Result<String, Error> {
    let value = Js::parse_snapshot(args)
        .map_err(|e| Error::new(ErrorCode::InvalidJson, format!("contract arguments: {e}")))?;
    let list = arguments(&value)?;
    Ok(match call(op, &list)? {
        Ok(Out::Undefined) => "u".to_string(),
        Ok(Out::Input(index)) => format!("i{index}"),
        Ok(Out::Json(json)) => format!("j{json}"),
        Err(failure) => format!("e{}", failure.to_json()),
    })
}

/// The C entry: `args` is a JSON array of plain JSON values; the answer is the JSON object
/// `{"ok":true,"value":V}` (no `value` for undefined) or `{"ok":false,"error":F}` with `F` as
/// [`Failure::to_json`] writes it.
pub fn call_json(op: &str, args: &str) -> Result<String, Error> {
    let value = Js::parse_json(args)
        .map_err(|e| Error::new(ErrorCode::InvalidJson, format!("contract arguments: {e}")))?;
    let list = arguments(&value)?;
    Ok(match call(op, &list)? {
        Ok(Out::Undefined) => r#"{"ok":true}"#.to_string(),
        Ok(Out::Input(index)) => {
            let echoed = list
                .get(index)
                .and_then(|v| v.to_json())
                .unwrap_or_else(|| "null".into());
            format!(r#"{{"ok":true,"value":{echoed}}}"#)
        }
        Ok(Out::Json(json)) => format!(r#"{{"ok":true,"value":{json}}}"#),
        Err(failure) => format!(r#"{{"ok":false,"error":{}}}"#, failure.to_json()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_answer_in_their_forms() {
        assert_eq!(
            call_snapshot("canonical.readString", r#"["x","$.a"]"#).unwrap(),
            "i0"
        );
        let refused = call_snapshot("canonical.readString", r#"[u,"$.a"]"#).unwrap();
        assert!(
            refused.starts_with("e{\"class\":\"ContractValidationError\""),
            "{refused}"
        );
        assert!(refused.contains(r#""path":"$.a""#));
        assert_eq!(
            call_json("canonical.readString", r#"["x","p"]"#).unwrap(),
            r#"{"ok":true,"value":"x"}"#
        );
        assert_eq!(
            call_json("canonical.readString", r#"[1,"p"]"#).unwrap(),
            concat!(
                r#"{"ok":false,"error":{"class":"ContractValidationError","#,
                r#""message":"p: must be a non-empty string","#,
                r#""detail":"must be a non-empty string","path":"p"}}"#
            )
        );
    }

    #[test]
    fn bad_calls_are_errors_not_failures() {
        let e = call_json("no.such", "[]").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert_eq!(
            call_json("canonical.readString", "{}").unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            call_json("canonical.readString", "[u]").unwrap_err().code(),
            ErrorCode::InvalidJson
        );
        assert_eq!(
            call_snapshot("canonical.readString", "[_]")
                .unwrap_err()
                .code(),
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn every_operation_is_named_module_dot_function() {
        for name in operations() {
            let (module, function) = name.split_once('.').expect(name);
            assert!(!module.is_empty() && !function.is_empty(), "{name}");
        }
    }
}
