//! `canonicalJson`, `canonicalFrame` and `canonicalHash` over snapshot values, and the store gate
//! `validateVersionedStoreRecord`.
//!
//! A [`Js`] value becomes a [`Value`] of the canonical data model with the TypeScript core's
//! checks, in its order, with its paths and messages (`$.a: undefined is not a canonical value`,
//! `$[1]: sparse array holes are not supported`, `$.[key]: string contains an unpaired high
//! surrogate`); the encoder of [`crate::canonical`] then writes it. Each refusal is a
//! `ContractValidationError` that also carries the stable code the package gave before
//! (`UNSUPPORTED_VALUE`, `UNSUPPORTED_NUMBER`, `UNPAIRED_SURROGATE`, `NESTING_TOO_DEEP`,
//! `INVALID_DOMAIN`) as `.code`.
//!
//! Where the TypeScript core differs on purpose:
//! * a proxy is refused (`value must be a JSON primitive, array, or plain object`) instead of
//!   being entered;
//! * nesting is limited to [`MAX_DEPTH`] levels (the TypeScript core recurses until the stack
//!   overflows): a deeper array or object is `<path>: nesting deeper than 128 levels`.

use std::borrow::Cow;
use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use super::read::{self, element, member};
use super::value::{Js, JsObject, JsStr, Proto, number_to_string, write_json_string};
use super::{Failure, Op, Out};
use crate::canonical::{self, MAX_DEPTH, Value};
use crate::error::ErrorCode;

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "canonical.canonicalJson",
        run: |a| Ok(Out::Json(json_string(&canonical_json(a.get(0))?))),
    },
    Op {
        name: "canonical.canonicalFrame",
        run: |a| Ok(Out::Json(json_string(&frame(a.get(0), a.get(1))?))),
    },
    Op {
        name: "canonical.canonicalHash",
        run: |a| {
            let digest = Sha256::digest(frame(a.get(0), a.get(1))?.as_bytes());
            let mut hex = String::with_capacity(64);
            for byte in digest {
                let _ = write!(hex, "{byte:02x}");
            }
            Ok(Out::Json(json_string(&hex)))
        },
    },
    Op {
        name: "canonical.validateVersionedStoreRecord",
        run: |a| Ok(Out::Json(store_gate(a.get(0), a.get(1)))),
    },
    Op {
        name: "canonical.storeParserFailure",
        run: |a| Ok(Out::Json(parser_failure(a.get(0), a.get(1)))),
    },
];

/// A contract failure carrying a stable code too.
fn refuse(path: &str, detail: impl Into<String>, code: ErrorCode) -> Failure {
    let mut failure = Failure::contract(path, detail);
    failure.code = Some(code.as_str().to_string());
    failure
}

fn with_code(mut failure: Failure, code: ErrorCode) -> Failure {
    failure.code = Some(code.as_str().to_string());
    failure
}

fn internal(error: crate::error::Error) -> Failure {
    let mut failure = Failure::error(error.message());
    failure.code = Some(error.code().as_str().to_string());
    failure
}

fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    write_json_string(&mut out, text);
    out
}

/// The canonical JSON of a value, or the TypeScript core's refusal.
pub fn canonical_json(value: &Js) -> Result<String, Failure> {
    let model = to_value(value, 1).map_err(|f| within(f, || "$".to_string()))?;
    canonical::canonical_json(&model).map_err(internal)
}

/// The frame `agent-intercom-canonical-frame-v1:<L(domain)>:<domain>:<L(payload)>:<payload>`
/// (lengths in UTF-8 bytes) as text.
fn frame(domain: &Js, value: &Js) -> Result<String, Failure> {
    let domain = checked_domain(domain)?;
    let payload = canonical_json(value)?;
    Ok(format!(
        "{}:{}:{domain}:{}:{payload}",
        canonical::FRAME_PREFIX,
        domain.len(),
        payload.len()
    ))
}

/// The domain argument: `String(domain)` must match `/^[\x21-\x7e]+$/`; what is framed is
/// what `TextEncoder.encode(domain)` writes (nothing at all for `undefined`).
fn checked_domain(value: &Js) -> Result<String, Failure> {
    let text = match value {
        Js::Symbol => {
            return Err(Failure::type_error(
                "Cannot convert a Symbol value to a string",
            ));
        }
        Js::Str(s) if s.lone.is_some() => String::new(),
        other => other.js_string(),
    };
    if text.is_empty() || !text.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        return Err(refuse(
            "domain",
            "must be non-empty printable ASCII without whitespace",
            ErrorCode::InvalidDomain,
        ));
    }
    Ok(if matches!(value, Js::Undefined) {
        String::new()
    } else {
        text
    })
}

fn well_formed(s: &JsStr) -> Result<(), Failure> {
    read::well_formed(s, "").map_err(|f| with_code(f, ErrorCode::UnpairedSurrogate))
}

/// A failure of a member or element, seen from its container: `segment` goes in front of the
/// path (paths are built only for a failure, while it unwinds).
fn within(mut failure: Failure, segment: impl FnOnce() -> String) -> Failure {
    let mut path = segment();
    path.push_str(failure.path.as_deref().unwrap_or_default());
    failure.path = Some(path);
    failure
}

/// `value` in the canonical model; `depth` is 1 for the value itself. A failure's path is
/// relative to `value` (`""` for itself, `.a[1]` inside it).
fn to_value(value: &Js, depth: usize) -> Result<Value<'_>, Failure> {
    let refused = |detail: &str, code| Err(refuse("", detail, code));
    Ok(match value {
        Js::Undefined => {
            return refused(
                "undefined is not a canonical value",
                ErrorCode::UnsupportedValue,
            );
        }
        Js::Null => Value::Null,
        Js::Bool(b) => Value::Bool(*b),
        Js::Str(s) => {
            well_formed(s)?;
            Value::String(Cow::Borrowed(&s.text))
        }
        Js::Num(_) => match value.safe_integer() {
            Some(n) => Value::Int(n),
            None => {
                return refused(
                    "number must be a safe integer and must not be negative zero",
                    ErrorCode::UnsupportedNumber,
                );
            }
        },
        Js::Array(_)
        | Js::Object(JsObject {
            proto: Proto::Plain,
            ..
        }) if depth > MAX_DEPTH => {
            return refused(
                &format!("nesting deeper than {MAX_DEPTH} levels"),
                ErrorCode::NestingTooDeep,
            );
        }
        Js::Array(_) => {
            let items = read::dense_array(value, "")
                .map_err(|f| with_code(f, ErrorCode::UnsupportedValue))?;
            let mut out = Vec::with_capacity(items.len());
            for (index, item) in items.into_iter().enumerate() {
                let item =
                    to_value(item, depth + 1).map_err(|f| within(f, || element("", index)))?;
                out.push(item);
            }
            Value::Array(out)
        }
        Js::Object(object) if object.proto == Proto::Plain => {
            read::own_data_keys(value, "")
                .map_err(|f| with_code(f, ErrorCode::UnsupportedValue))?;
            // `Array.prototype.sort` without a comparator: UTF-16 code unit order (the encoder
            // then writes array-index keys first, as JavaScript enumerates them).
            let mut members: Vec<&(JsStr, Js)> = object.members.iter().collect();
            members.sort_by(|x, y| canonical::compare_utf16(&x.0.text, &y.0.text));
            let mut out = Vec::with_capacity(members.len());
            for (key, item) in members {
                well_formed(key).map_err(|f| within(f, || ".[key]".to_string()))?;
                let item =
                    to_value(item, depth + 1).map_err(|f| within(f, || member("", &key.text)))?;
                out.push((Cow::Borrowed(key.text.as_str()), item));
            }
            Value::Object(out)
        }
        _ => {
            return refused(
                "value must be a JSON primitive, array, or plain object",
                ErrorCode::UnsupportedValue,
            );
        }
    })
}

/// `===` between two snapshot values, as far as a snapshot can tell: objects, symbols and
/// functions are never equal (their identity is not carried).
fn strict_equal(x: &Js, y: &Js) -> bool {
    match (x, y) {
        (Js::Undefined, Js::Undefined) | (Js::Null, Js::Null) => true,
        (Js::Bool(a), Js::Bool(b)) => a == b,
        (Js::Num(a), Js::Num(b)) => a == b,
        (Js::Str(a), Js::Str(b)) => a == b,
        (Js::BigInt(a), Js::BigInt(b)) => a == b,
        _ => false,
    }
}

/// `^(.*\.v)(\d+)$`: the family (through `.v`) and the revision.
fn version_family(text: &str) -> Option<(&str, f64)> {
    let digits = text.bytes().rev().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let (family, revision) = text.split_at(text.len() - digits);
    // `.` matches no line terminator.
    if !family.ends_with(".v") || family.contains(['\n', '\r', '\u{2028}', '\u{2029}']) {
        return None;
    }
    Some((family, revision.parse().unwrap_or(f64::INFINITY)))
}

/// A refusal of the store gate, as JSON; `observed` writes an `observedVersion` key (whose value
/// the binding replaces by the caller's own value).
fn store_failure(status: &str, message: &str, observed: bool, path: Option<&str>) -> String {
    let mut out = String::from("{\"ok\":false,\"status\":");
    write_json_string(&mut out, status);
    if observed {
        out.push_str(",\"observedVersion\":null");
    }
    if let Some(path) = path {
        out.push_str(",\"path\":");
        write_json_string(&mut out, path);
    }
    out.push_str(",\"message\":");
    write_json_string(&mut out, message);
    out.push_str(",\"preserveExisting\":true,\"mutationAllowed\":false}");
    out
}

/// The decision of `validateVersionedStoreRecord` before its parser runs: `{"ok":true,...}` means
/// "call the parser"; anything else is the result to return.
pub fn store_gate(value: &Js, expected: &Js) -> String {
    if let Err(failure) = read::record(value, "$") {
        return store_failure(
            "corrupt",
            &failure.message(),
            false,
            failure.path.as_deref(),
        );
    }
    let version = read::field(value, "version");
    let corrupt = |message: &str| store_failure("corrupt", message, false, Some("$.version"));
    if !value.has_own("version") || matches!(version, Js::Undefined) {
        return corrupt("store version is required");
    }
    if matches!(version, Js::Hidden) {
        return corrupt("store version must be an enumerable data property");
    }
    if strict_equal(version, expected) {
        return r#"{"ok":true,"status":"valid"}"#.to_string();
    }
    let at = Some("$.version");
    let older_or_newer = |newer: bool, observed: &str, expected: &str| {
        let status = if newer {
            "unsupported_newer_version"
        } else {
            "unsupported_older_version"
        };
        let message = format!("unsupported store version {observed}; expected {expected}");
        store_failure(status, &message, true, at)
    };
    match (version, expected) {
        (Js::Num(o), Js::Num(e)) if super::value::is_safe_integer(*o) => {
            older_or_newer(o > e, &number_to_string(*o), &number_to_string(*e))
        }
        (Js::Str(o), Js::Str(e)) => match (version_family(&o.text), version_family(&e.text)) {
            (Some((of, or)), Some((ef, er))) if of == ef => {
                older_or_newer(or > er, &o.text, &e.text)
            }
            _ => store_failure(
                "foreign_version",
                &format!("foreign store version {}", o.text),
                true,
                at,
            ),
        },
        _ => store_failure(
            "foreign_version",
            "store version uses an incompatible representation",
            true,
            at,
        ),
    }
}

/// The result when the parser threw: `message` is the error's message (`undefined` when it was
/// not an `Error`), `path` its path when it was a `ContractValidationError`.
pub fn parser_failure(message: &Js, path: &Js) -> String {
    let message = match message {
        Js::Undefined => "unknown validation failure".to_string(),
        other => other.js_string(),
    };
    let path = match path {
        Js::Undefined => None,
        other => Some(other.js_string()),
    };
    store_failure("corrupt", &message, true, path.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{call_json, call_snapshot};

    fn snap(text: &str) -> Js {
        Js::parse_snapshot(text).unwrap()
    }

    fn refusal(text: &str) -> Failure {
        canonical_json(&snap(text)).unwrap_err()
    }

    #[test]
    fn values_encode_as_the_typescript_core_does() {
        assert_eq!(
            canonical_json(&snap(r#"{"b":1,"10":[true,null,"x"],"9":{},"a":"é"}"#)).unwrap(),
            r#"{"9":{},"10":[true,null,"x"],"a":"é","b":1}"#
        );
        assert_eq!(
            canonical_json(&snap("-9007199254740991")).unwrap(),
            "-9007199254740991"
        );
    }

    #[test]
    fn refusals_carry_the_typescript_paths_messages_and_a_code() {
        for (text, message, code) in [
            (
                r#"{"a":u}"#,
                "$.a: undefined is not a canonical value",
                "UNSUPPORTED_VALUE",
            ),
            (
                "[1,_]",
                "$[1]: sparse array holes are not supported",
                "UNSUPPORTED_VALUE",
            ),
            (
                r#"{"\ud800":1}"#,
                "$.[key]: string contains an unpaired high surrogate",
                "UNPAIRED_SURROGATE",
            ),
            (
                r#"["\udc00"]"#,
                "$[0]: string contains an unpaired low surrogate",
                "UNPAIRED_SURROGATE",
            ),
            (
                "-0",
                "$: number must be a safe integer and must not be negative zero",
                "UNSUPPORTED_NUMBER",
            ),
            (
                "[N]",
                "$[0]: number must be a safe integer and must not be negative zero",
                "UNSUPPORTED_NUMBER",
            ),
            (
                r#"{"x":p}"#,
                "$.x: value must be a JSON primitive, array, or plain object",
                "UNSUPPORTED_VALUE",
            ),
            (
                "{#}",
                "$: value must be a JSON primitive, array, or plain object",
                "UNSUPPORTED_VALUE",
            ),
            (
                r#"{"g":h}"#,
                "$.g: must be an enumerable data property",
                "UNSUPPORTED_VALUE",
            ),
            (
                r#"{!"a":1}"#,
                "$: symbol properties are not supported",
                "UNSUPPORTED_VALUE",
            ),
            (
                "[!1]",
                "$: array must not have symbol or non-index properties",
                "UNSUPPORTED_VALUE",
            ),
            (
                "[f]",
                "$[0]: value must be a JSON primitive, array, or plain object",
                "UNSUPPORTED_VALUE",
            ),
            (
                r#"b"1""#,
                "$: value must be a JSON primitive, array, or plain object",
                "UNSUPPORTED_VALUE",
            ),
        ] {
            let failure = refusal(text);
            assert_eq!(failure.class, "ContractValidationError", "{text}");
            assert_eq!(failure.message(), message, "{text}");
            assert_eq!(failure.code.as_deref(), Some(code), "{text}");
        }
    }

    #[test]
    fn keys_are_checked_in_code_unit_order() {
        // "10" sorts before "9" by code units: its problem is reported first.
        assert_eq!(
            refusal(r#"{"9":u,"10":u}"#).message(),
            "$.10: undefined is not a canonical value"
        );
        assert_eq!(
            refusal(r#"{"b":u,"a":[u]}"#).message(),
            "$.a[0]: undefined is not a canonical value"
        );
    }

    #[test]
    fn nesting_is_limited() {
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(canonical_json(&snap(&ok)).is_ok());
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        let failure = refusal(&deep);
        assert_eq!(failure.code.as_deref(), Some("NESTING_TOO_DEEP"));
        assert!(
            failure
                .message()
                .ends_with(": nesting deeper than 128 levels")
        );
        assert_eq!(
            failure.path.unwrap(),
            format!("${}", "[0]".repeat(MAX_DEPTH))
        );
    }

    #[test]
    fn frames_hashes_and_domains() {
        assert_eq!(
            call_json("canonical.canonicalFrame", r#"["d",{"é":1}]"#).unwrap(),
            r#"{"ok":true,"value":"agent-intercom-canonical-frame-v1:1:d:8:{\"é\":1}"}"#
        );
        assert_eq!(
            call_json(
                "canonical.canonicalHash",
                r#"["boss-test-v1",{"b":2,"a":1}]"#
            )
            .unwrap(),
            concat!(
                r#"{"ok":true,"value":"#,
                r#""4ff6c078039d0d494b220a4dafa919c183136d4cf7e303eed1bc642ab0b8e4c2"}"#
            )
        );
        // String(domain), as the TypeScript regular expression test reads it.
        assert!(
            call_json("canonical.canonicalHash", "[42,1]")
                .unwrap()
                .starts_with(r#"{"ok":true"#)
        );
        for bad in [r#""""#, r#""a b""#, r#""é""#, r#""\ud800""#] {
            let answer = call_json("canonical.canonicalHash", &format!("[{bad},1]")).unwrap();
            assert!(
                answer.contains(
                    r#""message":"domain: must be non-empty printable ASCII without whitespace""#
                ) && answer.contains(r#""code":"INVALID_DOMAIN""#),
                "{answer}"
            );
        }
        let symbol = call_snapshot("canonical.canonicalFrame", "[s,1]").unwrap();
        assert!(symbol.starts_with(r#"e{"class":"TypeError""#), "{symbol}");
        // `undefined` passes the check as "undefined" but frames as nothing (TextEncoder).
        assert_eq!(
            call_snapshot("canonical.canonicalFrame", "[u,1]").unwrap(),
            r#"j"agent-intercom-canonical-frame-v1:0::1:1""#
        );
        // The domain is checked before the value.
        let both = call_snapshot("canonical.canonicalHash", r#"["",u]"#).unwrap();
        assert!(both.contains(r#""path":"domain""#), "{both}");
    }

    #[test]
    fn the_store_gate() {
        let gate = |value: &str, expected: &str| store_gate(&snap(value), &snap(expected));
        assert_eq!(
            gate(r#"{"version":2}"#, "2"),
            r#"{"ok":true,"status":"valid"}"#
        );
        assert_eq!(
            gate("[]", "2"),
            concat!(
                r#"{"ok":false,"status":"corrupt","path":"$","#,
                r#""message":"$: must be a plain object","#,
                r#""preserveExisting":true,"mutationAllowed":false}"#
            )
        );
        assert!(
            gate("{}", "2").contains(r#""path":"$.version","message":"store version is required""#)
        );
        assert!(gate(r#"{"version":u}"#, "2").contains("store version is required"));
        assert!(
            gate(r#"{"version":h}"#, "2")
                .contains("$.version: must be an enumerable data property")
        );
        assert_eq!(
            gate(r#"{"version":3}"#, "2"),
            concat!(
                r#"{"ok":false,"status":"unsupported_newer_version","observedVersion":null,"#,
                r#""path":"$.version","message":"unsupported store version 3; expected 2","#,
                r#""preserveExisting":true,"mutationAllowed":false}"#
            )
        );
        assert!(gate(r#"{"version":-0}"#, "0").contains(r#""ok":true"#));
        assert!(gate(r#"{"version":1}"#, "2").contains("unsupported_older_version"));
        assert!(gate(r#"{"version":1.5}"#, "2").contains("incompatible representation"));
        assert!(gate(r#"{"version":N}"#, "N").contains("incompatible representation"));
        assert!(gate(r#"{"version":"2"}"#, "2").contains("incompatible representation"));
        assert!(gate(r#"{"version":"a.v10"}"#, r#""a.v9""#).contains("unsupported_newer_version"));
        assert!(gate(r#"{"version":"a.v01"}"#, r#""a.v1""#).contains("unsupported_older_version"));
        assert!(
            gate(r#"{"version":"b.v1"}"#, r#""a.v1""#)
                .contains(r#""message":"foreign store version b.v1""#)
        );
        assert!(gate(r#"{"version":"a\nb.v2"}"#, r#""a\nb.v1""#).contains("foreign_version"));
        assert_eq!(version_family("x.v1.v22"), Some(("x.v1.v", 22.0)));
        assert_eq!(version_family("x.v"), None);
        assert_eq!(
            parser_failure(&snap(r#""$.a: bad""#), &snap(r#""$.a""#)),
            concat!(
                r#"{"ok":false,"status":"corrupt","observedVersion":null,"path":"$.a","#,
                r#""message":"$.a: bad","preserveExisting":true,"mutationAllowed":false}"#
            )
        );
        assert!(
            parser_failure(&Js::Undefined, &Js::Undefined)
                .contains(r#""observedVersion":null,"message":"unknown validation failure""#)
        );
    }
}
