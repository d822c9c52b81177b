//! The canonical readers as operations (`./canonical`'s `readString`, `assertExactKeys`, the
//! monotonic counters, ...). Each answers the value it was given ([`Out::Input`]) or
//! `undefined`, exactly as the TypeScript readers return their argument.

use super::read::{self, Read};
use super::value::{Js, array_index, number_to_string};
use super::{Args, Failure, Op, Out};

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "canonical.readString",
        run: |a| at(a, 1, |p| same(read::string(a.get(0), p))),
    },
    Op {
        name: "canonical.readOptionalString",
        run: |a| at(a, 1, |p| optional(read::optional_string(a.get(0), p))),
    },
    Op {
        name: "canonical.readIdentifier",
        run: |a| at(a, 1, |p| same(read::identifier(a.get(0), p))),
    },
    Op {
        name: "canonical.readOptionalIdentifier",
        run: |a| at(a, 1, |p| optional(read::optional_identifier(a.get(0), p))),
    },
    Op {
        name: "canonical.readInteger",
        run: |a| at(a, 1, |p| same(integer(a.get(0), p, a.get(2), 0.0))),
    },
    Op {
        name: "canonical.readOptionalInteger",
        run: |a| match a.get(0) {
            Js::Undefined => Ok(Out::Undefined),
            v => at(a, 1, |p| same(integer(v, p, a.get(2), 0.0))),
        },
    },
    Op {
        name: "canonical.readBoolean",
        run: |a| at(a, 1, |p| same(read::boolean(a.get(0), p))),
    },
    Op {
        name: "canonical.readOptionalBoolean",
        run: |a| at(a, 1, |p| optional(read::optional_boolean(a.get(0), p))),
    },
    Op {
        name: "canonical.readEnum",
        run: read_enum,
    },
    Op {
        name: "canonical.readStringArray",
        run: |a| {
            at(a, 1, |p| {
                let items = read::string_array(a.get(0), p)?;
                if !items.is_empty() && matches!(a.get(1), Js::Symbol) {
                    // Each element's path is a template literal, printed before it is read.
                    return Err(symbol_to_string());
                }
                Ok(Out::Json(string_list_json(&items)))
            })
        },
    },
    Op {
        name: "canonical.readTimestamp",
        run: |a| at(a, 1, |p| same(read::timestamp(a.get(0), p))),
    },
    Op {
        name: "canonical.readOptionalTimestamp",
        run: |a| at(a, 1, |p| optional(read::optional_timestamp(a.get(0), p))),
    },
    Op {
        name: "canonical.readHexDigest",
        run: |a| at(a, 1, |p| same(read::hex_digest(a.get(0), p))),
    },
    Op {
        name: "canonical.assertRecord",
        run: |a| {
            at_or(a, 1, "$", |p| {
                read::record(a.get(0), p).map(|()| Out::Undefined)
            })
        },
    },
    Op {
        name: "canonical.assertExactKeys",
        run: assert_exact_keys,
    },
    Op {
        name: "canonical.readMonotonicCounter",
        run: |a| at(a, 1, |p| same(integer(a.get(0), p, a.get(3), 1.0))),
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
    ("deliveryClaimGeneration", "claimGeneration", 1, false),
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
        Js::Symbol => return Err(symbol_to_string()),
        other => other.js_string(),
    })
}

fn symbol_to_string() -> Failure {
    Failure::type_error("Cannot convert a Symbol value to a string")
}

/// Runs `read` with the path argument at `index` as the TypeScript readers use it: printed only
/// when a message needs it (`undefined` prints as `undefined`), so a symbol path fails only
/// when the value is refused.
fn at(
    a: Args<'_>,
    index: usize,
    read: impl FnOnce(&str) -> Result<Out, Failure>,
) -> Result<Out, Failure> {
    at_or(a, index, "undefined", read)
}

/// [`at`] for a reader whose path parameter defaults to `default`.
fn at_or(
    a: Args<'_>,
    index: usize,
    default: &str,
    read: impl FnOnce(&str) -> Result<Out, Failure>,
) -> Result<Out, Failure> {
    match a.get(index) {
        Js::Symbol => read("").map_err(|failure| match failure.class {
            "ContractValidationError" => symbol_to_string(),
            _ => failure,
        }),
        _ => read(&path(a, index, default)?),
    }
}

/// `ToNumber` of a value used as a comparison operand (`value < minimum`); what JavaScript
/// would get from an object's `valueOf`/`toString` is taken from its default behaviour (no
/// caller code runs).
fn to_number(value: &Js) -> Result<f64, Failure> {
    Ok(match value {
        Js::Undefined | Js::Function | Js::Proxy | Js::Hidden | Js::Object(_) => f64::NAN,
        Js::Null => 0.0,
        Js::Bool(b) => f64::from(u8::from(*b)),
        Js::Num(n) => *n,
        Js::Str(s) => string_to_number(&s.text),
        Js::BigInt(digits) => digits.parse().unwrap_or(f64::NAN),
        Js::Symbol => {
            return Err(Failure::type_error(
                "Cannot convert a Symbol value to a number",
            ));
        }
        Js::Array(_) => string_to_number(&value.js_string()),
    })
}

/// JavaScript's `StringToNumber`: trimmed; empty is 0; `0x`/`0o`/`0b` integers; `Infinity`;
/// decimal literals.
fn string_to_number(text: &str) -> f64 {
    let text = text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if text.is_empty() {
        return 0.0;
    }
    for (prefix, radix) in [
        ("0x", 16),
        ("0X", 16),
        ("0o", 8),
        ("0O", 8),
        ("0b", 2),
        ("0B", 2),
    ] {
        if let Some(digits) = text.strip_prefix(prefix) {
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                return f64::NAN;
            }
            return digits.chars().fold(0.0, |acc, c| {
                acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
            });
        }
    }
    match text.strip_prefix(['+', '-']).unwrap_or(text) {
        "Infinity" if text.starts_with('-') => return f64::NEG_INFINITY,
        "Infinity" => return f64::INFINITY,
        _ => {}
    }
    if !text
        .bytes()
        .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
    {
        return f64::NAN;
    }
    text.parse().unwrap_or(f64::NAN)
}

/// `readInteger` with a caller's minimum, compared as JavaScript compares (`value < minimum`,
/// false when the minimum is NaN, so only the safe-integer test remains).
fn integer(value: &Js, path: &str, minimum: &Js, default: f64) -> Read<i64> {
    let Some(n) = value.safe_integer() else {
        return below(path, minimum, default);
    };
    let min = match minimum {
        Js::Undefined => default,
        other => to_number(other)?,
    };
    if (n as f64) < min {
        return below(path, minimum, default);
    }
    Ok(n)
}

fn below<T>(path: &str, minimum: &Js, default: f64) -> Read<T> {
    let shown = match minimum {
        Js::Undefined => number_to_string(default),
        Js::Symbol => return Err(symbol_to_string()),
        other => other.js_string(),
    };
    read::fail(path, format!("must be a safe integer >= {shown}"))
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

/// `readEnum(value, allowed, path)`: `allowed.includes(value)`, then the message lists
/// `allowed.join(", ")` (elements printed as `join` prints them).
fn read_enum(a: Args<'_>) -> Result<Out, Failure> {
    let (value, allowed) = (a.get(0), a.get(1));
    at(a, 2, |p| match allowed {
        Js::Array(array) => {
            let found = value.as_str().is_some_and(|text| {
                array
                    .items
                    .iter()
                    .any(|item| item.as_ref().and_then(Js::as_str) == Some(text))
            });
            if found {
                return Ok(Out::Input(0));
            }
            let listed: Vec<String> = array
                .items
                .iter()
                .map(|item| match item {
                    None | Some(Js::Undefined | Js::Null) => String::new(),
                    Some(v) => v.js_string(),
                })
                .collect();
            read::fail(p, format!("must be one of: {}", listed.join(", ")))
        }
        Js::Str(s) if value.as_str().is_some_and(|text| s.text.contains(text)) => {
            // String.prototype.includes: a substring passes.
            Ok(Out::Input(0))
        }
        Js::Undefined | Js::Null => {
            let method = if matches!(value, Js::Str(_)) {
                "includes"
            } else {
                "join"
            };
            Err(Failure::type_error(format!(
                "Cannot read properties of {} (reading '{method}')",
                allowed.js_string()
            )))
        }
        _ if !matches!(value, Js::Str(_)) || !matches!(allowed, Js::Str(_)) => {
            let method = if matches!(value, Js::Str(_)) {
                "includes"
            } else {
                "join"
            };
            Err(Failure::type_error(format!(
                "allowed.{method} is not a function"
            )))
        }
        _ => Err(Failure::type_error("allowed.join is not a function")),
    })
}

fn assert_exact_keys(a: Args<'_>) -> Result<Out, Failure> {
    let required = strings_of(a.get(1), "required")?;
    let optional = match a.get(2) {
        Js::Undefined => Vec::new(),
        v => strings_of(v, "optional")?,
    };
    let value = a.get(0);
    at_or(a, 3, "$", |p| match value {
        Js::Object(_) => read::exact_keys(value, &required, &optional, p).map(|()| Out::Undefined),
        Js::Proxy => Err(Failure::type_error(
            "a proxy is refused without being entered",
        )),
        _ => exact_keys_of_non_object(value, &required, p),
    })
}

/// `assertExactKeys` given something other than a plain object: `Object.hasOwn` for each
/// required key, then `Reflect.ownKeys`, which throws on a primitive and, on an array or a
/// function, meets the non-enumerable `length`.
fn exact_keys_of_non_object(value: &Js, required: &[&str], path: &str) -> Result<Out, Failure> {
    let own = |key: &str| match value {
        Js::Undefined | Js::Null => None,
        Js::Array(array) => Some(
            key == "length"
                || array_index(key)
                    .is_some_and(|i| matches!(array.items.get(i as usize), Some(Some(_)))),
        ),
        Js::Str(s) => Some(
            key == "length"
                || array_index(key).is_some_and(|i| (i as usize) < s.text.encode_utf16().count()),
        ),
        Js::Function => Some(key == "length" || key == "name"),
        _ => Some(false),
    };
    for key in required {
        match own(key) {
            None => {
                return Err(Failure::type_error(
                    "Cannot convert undefined or null to object",
                ));
            }
            Some(false) => return read::fail(&read::member(path, key), "is required"),
            Some(true) => {}
        }
    }
    match value {
        Js::Array(array) => {
            for (index, item) in array.items.iter().enumerate() {
                if matches!(item, Some(Js::Hidden)) {
                    let at = read::member(path, &index.to_string());
                    return read::fail(&at, "must be an enumerable data property");
                }
            }
            read::fail(
                &read::member(path, "length"),
                "must be an enumerable data property",
            )
        }
        Js::Function => read::fail(
            &read::member(path, "length"),
            "must be an enumerable data property",
        ),
        _ => Err(Failure::type_error("Reflect.ownKeys called on non-object")),
    }
}

/// `canonical.counter(name, value, path?, minimum?)`: one of [`COUNTERS`].
fn counter(a: Args<'_>) -> Result<Out, Failure> {
    let name = a.get(0).as_str().unwrap_or_default();
    let Some(&(_, default_path, default_min, takes_min)) =
        COUNTERS.iter().find(|(n, ..)| *n == name)
    else {
        return Err(Failure::type_error(format!("unknown counter {name:?}")));
    };
    let minimum = if takes_min { a.get(3) } else { &Js::Undefined };
    at_or(a, 2, default_path, |p| {
        integer(a.get(1), p, minimum, default_min as f64).map(|_| Out::Input(1))
    })
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
    use crate::registry::{call_json, call_snapshot};

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
    fn minimums_compare_as_javascript_does() {
        use super::string_to_number;
        for (text, n) in [
            ("", 0.0),
            (" 4 ", 4.0),
            ("0x10", 16.0),
            ("0b11", 3.0),
            ("-Infinity", f64::NEG_INFINITY),
            ("1e2", 100.0),
            (".5", 0.5),
        ] {
            assert_eq!(string_to_number(text), n, "{text:?}");
        }
        for text in ["inf", "nan", "0x", "1_0", "--1", "+0x1"] {
            assert!(string_to_number(text).is_nan(), "{text:?}");
        }
        let r = call_snapshot("canonical.readInteger", r#"[3,"n","0x10"]"#).unwrap();
        assert!(
            r.contains(r#""message":"n: must be a safe integer >= 0x10""#),
            "{r}"
        );
        assert_eq!(
            call_snapshot("canonical.readInteger", r#"[3,"n",N]"#).unwrap(),
            "i0"
        );
        assert_eq!(
            call_snapshot("canonical.readInteger", r#"[3,"n",null]"#).unwrap(),
            "i0"
        );
        let r = call_snapshot("canonical.readInteger", r#"[3,"n",s]"#).unwrap();
        assert!(
            r.contains("Cannot convert a Symbol value to a number"),
            "{r}"
        );
        // Not a safe integer: the minimum is never converted, only printed.
        let r = call_snapshot("canonical.readInteger", r#"[-0,"n",[5]]"#).unwrap();
        assert!(
            r.contains(r#""message":"n: must be a safe integer >= 5""#),
            "{r}"
        );
    }

    #[test]
    fn paths_are_printed_only_for_a_refusal() {
        assert_eq!(
            call_snapshot("canonical.readString", r#"["x",s]"#).unwrap(),
            "i0"
        );
        let r = call_snapshot("canonical.readString", r#"["",s]"#).unwrap();
        assert!(r.starts_with(r#"e{"class":"TypeError""#), "{r}");
        let r = call_snapshot("canonical.readString", r#"[""]"#).unwrap();
        assert!(
            r.contains(r#""message":"undefined: must be a non-empty string""#),
            "{r}"
        );
        // Each element path of readStringArray is printed, even for a valid element.
        assert_eq!(
            call_snapshot("canonical.readStringArray", "[[],s]").unwrap(),
            "j[]"
        );
        let r = call_snapshot("canonical.readStringArray", r#"[["a"],s]"#).unwrap();
        assert!(r.starts_with(r#"e{"class":"TypeError""#), "{r}");
    }

    #[test]
    fn exact_keys_of_what_is_not_a_plain_object() {
        let r = call_json("canonical.assertExactKeys", r#"[[],[],[],"$.k"]"#).unwrap();
        assert!(
            r.contains(r#""message":"$.k.length: must be an enumerable data property""#),
            "{r}"
        );
        let r = call_json("canonical.assertExactKeys", r#"[5,["a"]]"#).unwrap();
        assert!(r.contains(r#""message":"$.a: is required""#), "{r}");
        let r = call_json("canonical.assertExactKeys", r#"["ab",["1"]]"#).unwrap();
        assert!(r.contains("Reflect.ownKeys called on non-object"), "{r}");
        let r = call_json("canonical.assertExactKeys", "[null,[]]").unwrap();
        assert!(r.contains("Reflect.ownKeys called on non-object"), "{r}");
        let r = call_json("canonical.assertExactKeys", r#"[null,["a"]]"#).unwrap();
        assert!(
            r.contains("Cannot convert undefined or null to object"),
            "{r}"
        );
        let r = call_snapshot("canonical.assertExactKeys", r#"[p,["a"]]"#).unwrap();
        assert!(
            r.contains("a proxy is refused without being entered"),
            "{r}"
        );
    }

    #[test]
    fn enums_read_allowed_as_javascript_does() {
        let r = call_json("canonical.readEnum", r#"[1,["a",null,1],"e"]"#).unwrap();
        assert!(
            r.contains(r#""message":"e: must be one of: a, , 1""#),
            "{r}"
        );
        assert_eq!(
            call_json("canonical.readEnum", r#"["b","abc","e"]"#).unwrap(),
            r#"{"ok":true,"value":"b"}"#
        );
        let r = call_json("canonical.readEnum", r#"["z","abc","e"]"#).unwrap();
        assert!(r.contains("allowed.join is not a function"), "{r}");
        let r = call_json("canonical.readEnum", r#"["z",null,"e"]"#).unwrap();
        assert!(
            r.contains("Cannot read properties of null (reading 'includes')"),
            "{r}"
        );
        let r = call_json("canonical.readEnum", r#"["z",5,"e"]"#).unwrap();
        assert!(r.contains("allowed.includes is not a function"), "{r}");
    }

    #[test]
    fn the_delivery_claim_counter_has_its_typescript_name() {
        let r = call_json("canonical.counter", r#"["deliveryClaimGeneration",0]"#).unwrap();
        assert!(
            r.contains(r#""message":"claimGeneration: must be a safe integer >= 1""#),
            "{r}"
        );
        let r = call_json("canonical.counter", r#"["claimGeneration",1]"#).unwrap();
        assert!(r.contains("unknown counter"), "{r}");
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
