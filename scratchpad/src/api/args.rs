//! The arguments of one request, read through typed accessors that reach only declared keys.

use agent_intercom_core::canonical::MAX_SAFE_INTEGER;
use agent_intercom_core::{Error, ErrorCode};
use serde_json::{Map, Value};

use super::table::{Arg, Request, refuse_unknown_keys};

pub(super) fn bad(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

#[cfg(test)]
thread_local! {
    /// Every key the handlers read, with its path ("pricing.input_per_million_micros").
    pub(super) static READ: std::cell::RefCell<std::collections::BTreeSet<String>> =
        Default::default();
}

fn empty() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

/// The arguments of one request: only the keys its [`Request`] declares can be present (the rest
/// were refused), and only declared keys may be read (a debug assertion). `null` counts as absent.
pub(super) struct Args<'a> {
    map: &'a Map<String, Value>,
    declared: &'static [Arg],
    /// The path of a nested object ("pricing"), for messages.
    at: &'static str,
}

impl<'a> Args<'a> {
    /// The arguments of `request` from `args` (an object, or `null` for none), refusing
    /// undeclared keys at any depth.
    pub(super) fn of(request: &'static Request, args: &'a Value) -> Result<Args<'a>, Error> {
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
    pub(super) fn value(&self, key: &str) -> Option<&'a Value> {
        self.declared(key);
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// A nested object of arguments (absent: empty, when `required` is false).
    pub(super) fn object(&self, key: &str, required: bool) -> Result<Args<'a>, Error> {
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

    pub(super) fn opt_str(&self, key: &str) -> Result<Option<&'a str>, Error> {
        match self.value(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(bad(format!("{} must be a string", self.label(key)))),
        }
    }
    pub(super) fn str(&self, key: &str) -> Result<&'a str, Error> {
        self.opt_str(key)?
            .ok_or_else(|| bad(format!("{} is required", self.label(key))))
    }
    /// A name (an agent, a team, a tool, a task): a string that is not empty, since the empty
    /// name would be taken as a name nobody has.
    pub(super) fn opt_name(&self, key: &str) -> Result<Option<&'a str>, Error> {
        match self.opt_str(key)? {
            Some("") => Err(bad(format!(
                "{} must be a non-empty string (omit it, or give null, for none)",
                self.label(key)
            ))),
            other => Ok(other),
        }
    }
    pub(super) fn name(&self, key: &str) -> Result<&'a str, Error> {
        self.opt_name(key)?
            .ok_or_else(|| bad(format!("{} is required", self.label(key))))
    }
    pub(super) fn opt_int(&self, key: &str) -> Result<Option<i64>, Error> {
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
    pub(super) fn ttl_hours(&self, key: &str) -> Result<u32, Error> {
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
    pub(super) fn int(&self, key: &str) -> Result<i64, Error> {
        self.opt_int(key)?
            .ok_or_else(|| bad(format!("{} is required", self.label(key))))
    }
    pub(super) fn opt_u32(&self, key: &str) -> Result<Option<u32>, Error> {
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
    pub(super) fn u64_or_zero(&self, key: &str) -> Result<u64, Error> {
        match self.opt_int(key)? {
            None => Ok(0),
            Some(v) if (0..=MAX_SAFE_INTEGER).contains(&v) => Ok(v as u64),
            Some(_) => Err(bad(format!(
                "{} must be a whole number from 0 to {MAX_SAFE_INTEGER}",
                self.label(key)
            ))),
        }
    }
    pub(super) fn bool(&self, key: &str) -> Result<bool, Error> {
        match self.value(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(bad(format!("{} must be a boolean", self.label(key)))),
        }
    }
    pub(super) fn array(&self, key: &str) -> Result<Option<&'a Vec<Value>>, Error> {
        match self.value(key) {
            None => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items)),
            Some(_) => Err(bad(format!("{} must be an array", self.label(key)))),
        }
    }
    pub(super) fn strings(&self, key: &str) -> Result<Vec<String>, Error> {
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
    pub(super) fn limit(&self, default: usize) -> Result<usize, Error> {
        Ok(self
            .opt_int("limit")?
            .map(|l| usize::try_from(l).unwrap_or(0))
            .unwrap_or(default))
    }
}
