//! The Boss run contract (`./boss`, `./boss/policy`): feature contract constants and hashes,
//! record parsers, the Boss and feature-aware policies.
//!
//! Every rule reaches Node and C as a named contract operation (`boss.<function>`, gathered by
//! [`crate::registry`]); the modules here hold the rules and their constants once.

pub mod authority;
pub mod constants;
pub mod credential;
pub mod delivery;
pub mod feature;
pub mod participant;
pub mod policy;
pub mod service;
pub mod store;
pub mod supervision;
pub mod wire;
pub mod worker;
pub mod worker_store;

use std::fmt::Write as _;

use crate::contract::value::write_json_string;

/// A JSON object written member by member, in the order given (what a TypeScript object
/// literal keeps).
#[derive(Debug, Default)]
pub(crate) struct JsonObject {
    out: String,
}

impl JsonObject {
    pub(crate) fn new() -> JsonObject {
        // Room for a typical record's members: growing from one byte was a tenth of writing.
        let mut out = String::with_capacity(256);
        out.push('{');
        JsonObject { out }
    }

    fn key(&mut self, key: &str) -> &mut String {
        if self.out.len() > 1 {
            self.out.push(',');
        }
        write_json_string(&mut self.out, key);
        self.out.push(':');
        &mut self.out
    }

    /// A string member.
    pub(crate) fn str(mut self, key: &str, value: &str) -> JsonObject {
        write_json_string(self.key(key), value);
        self
    }

    /// An integer member.
    pub(crate) fn int(mut self, key: &str, value: i64) -> JsonObject {
        let _ = write!(self.key(key), "{value}");
        self
    }

    /// A boolean member.
    pub(crate) fn bool(mut self, key: &str, value: bool) -> JsonObject {
        self.key(key).push_str(if value { "true" } else { "false" });
        self
    }

    /// A member already written as JSON.
    pub(crate) fn raw(mut self, key: &str, json: &str) -> JsonObject {
        self.key(key).push_str(json);
        self
    }

    /// A string member, when present.
    pub(crate) fn opt_str(self, key: &str, value: Option<&str>) -> JsonObject {
        match value {
            Some(v) => self.str(key, v),
            None => self,
        }
    }

    /// An integer member, when present.
    pub(crate) fn opt_int(self, key: &str, value: Option<i64>) -> JsonObject {
        match value {
            Some(v) => self.int(key, v),
            None => self,
        }
    }

    /// The object after `add` wrote its members.
    pub(crate) fn then(self, add: fn(JsonObject) -> JsonObject) -> JsonObject {
        add(self)
    }

    /// The object's text.
    pub(crate) fn finish(mut self) -> String {
        self.out.push('}');
        self.out
    }
}

/// A JSON array of strings.
pub(crate) fn string_array_json(items: &[&str]) -> String {
    let mut out = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json_string(&mut out, item);
    }
    out.push(']');
    out
}
