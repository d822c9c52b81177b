//! Typed access to the members of JSON-RPC parameters: `null` counts as absent, a value of the
//! wrong type is `-32602` naming the member (never replaced by a default).

use serde_json::{Map, Value};

use crate::errors::RpcError;

/// The parameters (or a nested object) with the path used in errors.
#[derive(Clone, Copy)]
pub struct Fields<'a> {
    /// The members.
    pub map: &'a Map<String, Value>,
    /// Where they are (`""` for the parameters, `message`, `message.parts[0]` ...).
    pub path: &'a str,
}

/// Largest integer accepted where a count is expected (historyLength, pageSize).
pub const MAX_COUNT: u64 = i32::MAX as u64;

impl<'a> Fields<'a> {
    /// The object `value` at `path`.
    pub fn of(value: &'a Value, path: &'a str) -> Result<Fields<'a>, RpcError> {
        match value {
            Value::Object(map) => Ok(Fields { map, path }),
            _ => Err(RpcError::param(
                if path.is_empty() { "params" } else { path },
                "must be an object",
            )),
        }
    }

    /// The path of member `key`.
    pub fn at(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// The member, `None` when absent or null.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// An optional string.
    pub fn str(&self, key: &str) -> Result<Option<&'a str>, RpcError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(RpcError::param(self.at(key), "must be a string")),
        }
    }

    /// A required string of 1 to `max` bytes.
    pub fn id(&self, key: &str, max: usize) -> Result<&'a str, RpcError> {
        match self.str(key)? {
            Some(s) => check_id(&self.at(key), s, max),
            None => Err(RpcError::param(self.at(key), "is required")),
        }
    }

    /// An optional string of 1 to `max` bytes (the empty string counts as absent, as proto3
    /// JSON writes an unset string).
    pub fn opt_id(&self, key: &str, max: usize) -> Result<Option<&'a str>, RpcError> {
        match self.str(key)? {
            None | Some("") => Ok(None),
            Some(s) => check_id(&self.at(key), s, max).map(Some),
        }
    }

    /// An optional boolean.
    pub fn bool(&self, key: &str) -> Result<Option<bool>, RpcError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(RpcError::param(self.at(key), "must be a boolean")),
        }
    }

    /// An optional whole number from 0 to [`MAX_COUNT`] (a number written as `5.0` counts;
    /// `"5"` does not).
    pub fn count(&self, key: &str) -> Result<Option<u64>, RpcError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => {
                let whole = n.as_u64().or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= MAX_COUNT as f64)
                        .map(|f| f as u64)
                });
                match whole {
                    Some(v) if v <= MAX_COUNT => Ok(Some(v)),
                    _ => Err(RpcError::param(
                        self.at(key),
                        format!("must be a whole number from 0 to {MAX_COUNT}"),
                    )),
                }
            }
            Some(_) => Err(RpcError::param(self.at(key), "must be a number")),
        }
    }

    /// An optional object.
    pub fn object(&self, key: &str) -> Result<Option<&'a Map<String, Value>>, RpcError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(_) => Err(RpcError::param(self.at(key), "must be an object")),
        }
    }

    /// An optional array.
    pub fn array(&self, key: &str) -> Result<Option<&'a Vec<Value>>, RpcError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(_) => Err(RpcError::param(self.at(key), "must be an array")),
        }
    }

    /// An optional array of strings.
    pub fn strings(&self, key: &str) -> Result<Option<Vec<&'a str>>, RpcError> {
        let Some(items) = self.array(key)? else {
            return Ok(None);
        };
        items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_str().ok_or_else(|| {
                    RpcError::param(format!("{}[{i}]", self.at(key)), "not a string")
                })
            })
            .collect::<Result<_, _>>()
            .map(Some)
    }
}

fn check_id<'a>(path: &str, s: &'a str, max: usize) -> Result<&'a str, RpcError> {
    if s.is_empty() || s.len() > max {
        return Err(RpcError::param(path, format!("must be 1 to {max} bytes")));
    }
    if s.chars().any(char::is_control) {
        return Err(RpcError::param(path, "must not hold control characters"));
    }
    Ok(s)
}
