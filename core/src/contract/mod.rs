//! The shared vocabulary of the TypeScript contract's operations: what every rule module of
//! `@ctliz/agent-intercom-core` 0.2.0 (policy, team manifest, canonical readers, Boss records and
//! policies, the signatures) is written in.
//!
//! An operation ([`Op`]) takes its arguments as one array of [`Js`] values ([`Args`]) and answers
//! [`Out`] or a [`Failure`] that names the JavaScript error class the TypeScript contract throws,
//! with the same path and message. [`value`] holds the value model and its two text forms,
//! [`read`] the readers every record parser is built from, [`ops`] the canonical readers as
//! operations, [`canonical`] canonical JSON over these values and the store gate.
//!
//! This module imports no rule module: each rule module declares its own `OPS` table in these
//! words, and [`crate::registry`], on top, gathers them into the one table the bindings call by
//! name.

pub mod canonical;
pub mod ops;
pub mod read;
pub mod value;

use std::fmt;

pub use value::{Js, JsArray, JsObject, JsStr, Lone, Proto};

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
