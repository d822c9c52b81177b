//! Store gates: the `validate*Store` functions of `./boss`, each `validateVersionedStoreRecord`
//! over one record version and one record parser, as one operation.
//!
//! A gate never fails: it answers `{ok:true,status:"valid",value}` or
//! `{ok:false,status,observedVersion?,path?,message,preserveExisting:true,mutationAllowed:false}`
//! (`status` one of `corrupt`, `unsupported_newer_version`, `unsupported_older_version`,
//! `foreign_version`). The version checks are [`crate::contract::canonical::store_gate`]'s; when
//! they pass, the parser runs and its refusal becomes a `corrupt` answer carrying the parser's
//! message and, for a contract failure, its path.
//!
//! Use it from a module's `OPS` table with a non-capturing closure:
//!
//! ```ignore
//! Op {
//!     name: "boss.validateAuthorityTransitionStore",
//!     run: |a| store::answer(a, StoreVersion::Text(AUTHORITY_TRANSITION_VERSION), parse_record),
//! },
//! ```
//!
//! where the parser is any `fn(&Js) -> Result<Out, Failure>` taking the record alone:
//! [`Out::Input`] when it returns the record itself (then `value` is that very object), or
//! [`Out::Json`] for a fresh value. A parser of another module is passed the same way: the
//! function itself, never the name of its operation.
//!
//! The answer is JSON. `observedVersion` is the record's own `version` member and `value` is the
//! parser's answer, both written as JSON (for C); the Node wrapper (`bindings-node/boss/store.js`)
//! puts the caller's own values back in their place, as the TypeScript gate returns them.

use crate::contract::canonical::{parser_failure, store_gate};
use crate::contract::read::field;
use crate::contract::{Args, Failure, Js, Out};

/// A record parser as a gate calls it.
pub type Parser = fn(&Js) -> Result<Out, Failure>;

/// The version a gate expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreVersion {
    /// A string version (`boss.authority-transition.v1`); a string of the same `<family>.v<n>`
    /// family is older or newer, any other string foreign.
    Text(&'static str),
    /// A numeric version; another safe integer is older or newer.
    Number(i64),
}

impl StoreVersion {
    fn as_js(self) -> Js {
        match self {
            StoreVersion::Text(text) => Js::str(text),
            StoreVersion::Number(n) => Js::Num(n as f64),
        }
    }
}

const OBSERVED_PLACEHOLDER: &str = "\"observedVersion\":null";

/// The JSON of a value, or `null` when JSON cannot hold it.
fn json(value: &Js) -> String {
    value.to_json().unwrap_or_else(|| "null".to_string())
}

/// A refusal with the record's own version in place of the placeholder the canonical gate
/// writes (its first `observedVersion` member, which comes right after `status`).
fn with_observed(refusal: String, value: &Js) -> String {
    if !refusal.contains(OBSERVED_PLACEHOLDER) {
        return refusal;
    }
    let observed = format!("\"observedVersion\":{}", json(field(value, "version")));
    refusal.replacen(OBSERVED_PLACEHOLDER, &observed, 1)
}

/// `validateVersionedStoreRecord(value, expected, parse)`, as JSON. `parse` is a [`Parser`] or
/// any closure of that shape (the store validators of every Boss module come here).
pub fn validate(
    value: &Js,
    expected: StoreVersion,
    parse: impl FnOnce(&Js) -> Result<Out, Failure>,
) -> String {
    let gate = store_gate(value, &expected.as_js());
    if !gate.starts_with(r#"{"ok":true"#) {
        return with_observed(gate, value);
    }
    match parse(value) {
        Ok(out) => {
            let parsed = match out {
                Out::Input(_) => Some(json(value)),
                Out::Json(text) => Some(text),
                Out::Undefined => None,
            };
            match parsed {
                Some(text) => format!(r#"{{"ok":true,"status":"valid","value":{text}}}"#),
                None => r#"{"ok":true,"status":"valid"}"#.to_string(),
            }
        }
        Err(failure) => {
            // A ContractValidationError (or a subclass) carries its path; an Error or a
            // TypeError only its message (no failure of another class has a path).
            let path = failure.path.as_deref().map_or(Js::Undefined, Js::str);
            with_observed(parser_failure(&Js::str(failure.message()), &path), value)
        }
    }
}

/// A gate as an operation's answer: `validate` over the first argument.
pub fn answer(a: Args<'_>, expected: StoreVersion, parse: Parser) -> Result<Out, Failure> {
    Ok(Out::Json(validate(a.get(0), expected, parse)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::read::{fail, string};

    fn snap(text: &str) -> Js {
        Js::parse_snapshot(text).unwrap()
    }

    fn named(v: &Js) -> Result<Out, Failure> {
        string(field(v, "name"), "$.name")?;
        Ok(Out::Input(0))
    }

    fn fresh(v: &Js) -> Result<Out, Failure> {
        let name = string(field(v, "name"), "$.name")?;
        Ok(Out::Json(format!(r#"{{"name":"{name}!"}}"#)))
    }

    fn throws(_: &Js) -> Result<Out, Failure> {
        Err(Failure::type_error("boom"))
    }

    fn refuses(_: &Js) -> Result<Out, Failure> {
        fail("$.deep", "no")
    }

    const V: StoreVersion = StoreVersion::Text("x.record.v2");

    #[test]
    fn valid_records_carry_the_parsed_value() {
        assert_eq!(
            validate(&snap(r#"{"version":"x.record.v2","name":"a"}"#), V, named),
            r#"{"ok":true,"status":"valid","value":{"version":"x.record.v2","name":"a"}}"#
        );
        assert_eq!(
            validate(&snap(r#"{"version":"x.record.v2","name":"a"}"#), V, fresh),
            r#"{"ok":true,"status":"valid","value":{"name":"a!"}}"#
        );
        assert_eq!(
            validate(&snap(r#"{"version":7}"#), StoreVersion::Number(7), |_| {
                Ok(Out::Undefined)
            }),
            r#"{"ok":true,"status":"valid"}"#
        );
    }

    #[test]
    fn version_refusals_carry_the_observed_version() {
        assert_eq!(
            validate(&snap(r#"{"version":"x.record.v3"}"#), V, named),
            concat!(
                r#"{"ok":false,"status":"unsupported_newer_version","#,
                r#""observedVersion":"x.record.v3","path":"$.version","#,
                r#""message":"unsupported store version x.record.v3; expected x.record.v2","#,
                r#""preserveExisting":true,"mutationAllowed":false}"#
            )
        );
        assert!(
            validate(&snap(r#"{"version":{"a":[1]}}"#), V, named)
                .contains(r#""status":"foreign_version","observedVersion":{"a":[1]},"#)
        );
        // JSON cannot hold it: null in the JSON answer (Node puts the caller's value back).
        assert!(
            validate(&snap(r#"{"version":s}"#), V, named).contains(r#""observedVersion":null,"#)
        );
        let missing = validate(&snap("{}"), V, named);
        assert!(!missing.contains("observedVersion"), "{missing}");
        assert!(missing.contains(r#""path":"$.version","message":"store version is required""#));
        let array = validate(&snap("[]"), V, named);
        assert!(array.contains(r#""path":"$","message":"$: must be a plain object""#));
    }

    #[test]
    fn parser_refusals_are_corrupt() {
        assert_eq!(
            validate(&snap(r#"{"version":"x.record.v2"}"#), V, named),
            concat!(
                r#"{"ok":false,"status":"corrupt","observedVersion":"x.record.v2","#,
                r#""path":"$.name","message":"$.name: must be a non-empty string","#,
                r#""preserveExisting":true,"mutationAllowed":false}"#
            )
        );
        assert!(
            validate(&snap(r#"{"version":"x.record.v2"}"#), V, refuses)
                .contains(r#""path":"$.deep","message":"$.deep: no""#)
        );
        let thrown = validate(&snap(r#"{"version":"x.record.v2"}"#), V, throws);
        assert!(!thrown.contains("\"path\""), "{thrown}");
        assert!(thrown.contains(r#""message":"boom""#), "{thrown}");
    }
}
