//! The operation registry: every rule of the TypeScript contract by its name, on top of the
//! modules that hold the rules.
//!
//! Each rule module declares its operations as an `OPS` table in the words of
//! [`crate::contract`]; this module gathers the tables into one, keyed by name, and is the one
//! door the bindings come through: [`call_snapshot`] (Node), [`call_json`] (C) and [`call`]
//! (Rust). No rule module imports it outside its tests: a rule that needs another module's rule
//! calls that function, never its name.
//!
//! Operation names are `<module>.<function>` in the TypeScript names (`policy.authorize`,
//! `canonical.readString`, `boss.parseBossControlEnvelope`); [`operations`] lists them.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::contract::{self, Args, Failure, Js, Op, Out};
use crate::error::{Error, ErrorCode};
use crate::{boss, envelope, httpsig, policy, team};

/// Every module's operations.
fn modules() -> [&'static [Op]; 22] {
    [
        contract::ops::OPS,
        contract::canonical::OPS,
        policy::OPS,
        team::OPS,
        boss::policy::OPS,
        boss::constants::OPS,
        boss::feature::OPS,
        boss::feature::semantics::OPS,
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
        httpsig::ops::OPS,
        envelope::ops::OPS,
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

/// The Node entry: `args` in the snapshot form (see [`contract::value`]); the answer is `u`
/// (undefined), `i<index>` (that argument itself), `j<json>` (a fresh value) or `e<json>` (a
/// [`Failure`]).
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
