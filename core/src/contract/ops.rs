//! The canonical readers as operations (`./canonical`'s `readString`, `assertExactKeys`, the
//! monotonic counters, ...). Each answers the value it was given ([`Out::Input`]) or
//! `undefined`, exactly as the TypeScript readers return their argument.

use super::read::{self, Read};
use super::value::{Js, number_to_string};
use super::{Args, Failure, Op, Out};

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "canonical.readString",
        run: |a| same(read::string(a.get(0), &path(a, 1, "")?)),
    },
    Op {
        name: "canonical.readOptionalString",
        run: |a| optional(read::optional_string(a.get(0), &path(a, 1, "")?)),
    },
    Op {
        name: "canonical.readIdentifier",
        run: |a| same(read::identifier(a.get(0), &path(a, 1, "")?)),
    },
    Op {
        name: "canonical.readOptionalIdentifier",
        run: |a| optional(read::optional_identifier(a.get(0), &path(a, 1, "")?)),
    },
    Op {
        name: "canonical.readInteger",
        run: |a| same(integer(a.get(0), &path(a, 1, "")?, a.get(2), 0.0)),
    },
    Op {
        name: "canonical.readOptionalInteger",
        run: |a| match a.get(0) {
            Js::Undefined => Ok(Out::Undefined),
            v => same(integer(v, &path(a, 1, "")?, a.get(2), 0.0)),
        },
    },
    Op {
        name: "canonical.readBoolean",
        run: |a| same(read::boolean(a.get(0), &path(a, 1, "")?)),
    },
    Op {
        name: "canonical.readOptionalBoolean",
        run: |a| optional(read::optional_boolean(a.get(0), &path(a, 1, "")?)),
    },
    Op {
        name: "canonical.readEnum",
        run: read_enum,
    },
    Op {
        name: "canonical.readStringArray",
        run: |a| {
            let items = read::string_array(a.get(0), &path(a, 1, "")?)?;
            Ok(Out::Json(string_list_json(&items)))
        },
    },
    Op {
        name: "canonical.readTimestamp",
        run: |a| same(read::timestamp(a.get(0), &path(a, 1, "")?)),
    },
    Op {
        name: "canonical.readOptionalTimestamp",
        run: |a| optional(read::optional_timestamp(a.get(0), &path(a, 1, "")?)),
    },
    Op {
        name: "canonical.readHexDigest",
        run: |a| same(read::hex_digest(a.get(0), &path(a, 1, "")?)),
    },
    Op {
        name: "canonical.assertRecord",
        run: |a| read::record(a.get(0), &path(a, 1, "$")?).map(|()| Out::Undefined),
    },
    Op {
        name: "canonical.assertExactKeys",
        run: assert_exact_keys,
    },
    Op {
        name: "canonical.readMonotonicCounter",
        run: |a| same(integer(a.get(0), &path(a, 1, "")?, a.get(3), 1.0)),
    },
    Op {
        name: "canonical.counter",
        run: counter,
    },
];

/// The branded counters: (function, default path, default minimum, whether a caller may pass
/// another minimum).
pub const COUNTERS: &[(&str, &str, i64, bool)] = &[
    ("bossBindingEpoch", "bossBindingEpoch", 1, true),
    ("participantBindingEpoch", "bindingEpoch", 1, true),
    ("subscriberBindingEpoch", "subscriberBindingEpoch", 1, true),
    (
        "subscriberBindingGeneration",
        "subscriberBindingGeneration",
        1,
        true,
    ),
    ("controllerGeneration", "controllerGeneration", 1, true),
    ("brokerRevision", "brokerRevision", 0, true),
    ("workerGeneration", "workerGeneration", 1, false),
    ("transitionVersion", "transitionVersion", 1, false),
    ("brokerGeneration", "brokerGeneration", 1, false),
    ("journalGeneration", "journalGeneration", 1, false),
    ("schedulerGeneration", "schedulerGeneration", 1, false),
    (
        "recipientTransferGeneration",
        "recipientTransferGeneration",
        0,
        true,
    ),
    ("claimGeneration", "claimGeneration", 1, false),
    ("triggerGeneration", "triggerGeneration", 0, true),
    ("watchdogGeneration", "watchdogGeneration", 1, false),
];

fn same<T>(result: Read<T>) -> Result<Out, Failure> {
    result.map(|_| Out::Input(0))
}

fn optional<T>(result: Read<Option<T>>) -> Result<Out, Failure> {
    result.map(|found| {
        if found.is_some() {
            Out::Input(0)
        } else {
            Out::Undefined
        }
    })
}

/// A path argument as a template literal prints it (`${path}`), `default` when undefined.
pub fn path(args: Args<'_>, index: usize, default: &str) -> Result<String, Failure> {
    Ok(match args.get(index) {
        Js::Undefined => default.to_string(),
        Js::Symbol => {
            return Err(Failure::type_error(
                "Cannot convert a Symbol value to a string",
            ));
        }
        other => other.js_string(),
    })
}

/// `readInteger` with a caller's minimum (JavaScript compares numbers; a minimum that is not one
/// makes every comparison false, so only the safe-integer test remains).
fn integer(value: &Js, path: &str, minimum: &Js, default: f64) -> Read<i64> {
    let min = match minimum {
        Js::Undefined => default,
        Js::Num(n) => *n,
        _ => f64::NAN,
    };
    let shown = match minimum {
        Js::Undefined | Js::Num(_) => number_to_string(min),
        other => other.js_string(),
    };
    match value.safe_integer() {
        // NaN compares false either way, as `value < minimum` does in JavaScript.
        Some(n) if (n as f64) >= min || min.is_nan() => Ok(n),
        _ => read::fail(path, format!("must be a safe integer >= {shown}")),
    }
}

fn strings_of<'v>(value: &'v Js, what: &str) -> Result<Vec<&'v str>, Failure> {
    let Js::Array(array) = value else {
        return Err(Failure::type_error(format!(
            "{what} must be an array of strings"
        )));
    };
    array
        .items
        .iter()
        .map(|item| match item {
            Some(Js::Str(s)) => Ok(s.text.as_str()),
            _ => Err(Failure::type_error(format!(
                "{what} must be an array of strings"
            ))),
        })
        .collect()
}

fn read_enum(a: Args<'_>) -> Result<Out, Failure> {
    let allowed = strings_of(a.get(1), "allowed")?;
    same(read::one_of(a.get(0), &allowed, &path(a, 2, "")?))
}

fn assert_exact_keys(a: Args<'_>) -> Result<Out, Failure> {
    let required = strings_of(a.get(1), "required")?;
    let optional = match a.get(2) {
        Js::Undefined => Vec::new(),
        v => strings_of(v, "optional")?,
    };
    let path = path(a, 3, "$")?;
    let value = a.get(0);
    if !matches!(value, Js::Object(_) | Js::Array(_)) {
        // Object.hasOwn and Reflect.ownKeys throw on a primitive.
        return Err(Failure::type_error(
            "Cannot convert undefined or null to object",
        ));
    }
    read::exact_keys(value, &required, &optional, &path).map(|()| Out::Undefined)
}

/// `canonical.counter(name, value, path?, minimum?)`: one of [`COUNTERS`].
fn counter(a: Args<'_>) -> Result<Out, Failure> {
    let name = a.get(0).as_str().unwrap_or_default();
    let Some(&(_, default_path, default_min, takes_min)) =
        COUNTERS.iter().find(|(n, ..)| *n == name)
    else {
        return Err(Failure::type_error(format!("unknown counter {name:?}")));
    };
    let path = match a.get(2) {
        Js::Undefined => default_path.to_string(),
        other => other.js_string(),
    };
    let minimum = if takes_min { a.get(3) } else { &Js::Undefined };
    integer(a.get(1), &path, minimum, default_min as f64).map(|_| Out::Input(1))
}

fn string_list_json(items: &[&str]) -> String {
    let mut out = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        super::value::write_json_string(&mut out, item);
    }
    out.push(']');
    out
}

#[cfg(test)]
mod tests {
    use super::super::{call_json, call_snapshot};

    #[test]
    fn counters_take_their_default_paths_and_minimums() {
        let r = call_snapshot("canonical.counter", r#"["brokerRevision",0]"#).unwrap();
        assert_eq!(r, "i1");
        let r = call_json("canonical.counter", r#"["workerGeneration",0]"#).unwrap();
        assert!(
            r.contains(r#""message":"workerGeneration: must be a safe integer >= 1""#),
            "{r}"
        );
        // workerGeneration takes no minimum: a fourth argument is ignored, as in TypeScript.
        let r = call_json("canonical.counter", r#"["workerGeneration",0,"w",0]"#).unwrap();
        assert!(
            r.contains(r#""message":"w: must be a safe integer >= 1""#),
            "{r}"
        );
        let r = call_json("canonical.counter", r#"["bossBindingEpoch",0,"e",0]"#).unwrap();
        assert_eq!(r, r#"{"ok":true,"value":0}"#);
    }

    #[test]
    fn exact_keys_and_enum() {
        let r = call_json(
            "canonical.assertExactKeys",
            r#"[{"a":1,"b":2},["a"],["c"],"$.x"]"#,
        )
        .unwrap();
        assert!(r.contains(r#""message":"$.x.b: is not supported""#), "{r}");
        let r = call_json("canonical.readEnum", r#"["z",["x","y"],"k"]"#).unwrap();
        assert!(r.contains("k: must be one of: x, y"), "{r}");
        let r = call_json("canonical.readStringArray", r#"[["a","b"],"l"]"#).unwrap();
        assert_eq!(r, r#"{"ok":true,"value":["a","b"]}"#);
    }
}
