//! The store validators of the delivery records: `validateVersionedStoreRecord(value,
//! VERSION, parser)` for notices, groups, claims and target-ledger results. They never throw:
//! a record that is not exactly the current version, or that its parser refuses, is a
//! fail-closed result (`preserveExisting: true`, `mutationAllowed: false`), never a default.
//!
//! The version gate is the canonical module's ([`store_gate`]); so are the parser-failure
//! results ([`parser_failure`]). Both write `observedVersion` as `null`; here it is the record's
//! version as JSON (still `null` where JSON has no form for it, `NaN` say), and a valid record's
//! `value` is the record's JSON. The Node binding puts the caller's own version and record
//! there instead, as `validateVersionedStoreRecord` does.

use super::{
    DELIVERY_CLAIM_VERSION, DELIVERY_GROUP_VERSION, LIFECYCLE_NOTICE_VERSION,
    TARGET_LEDGER_RESULT_VERSION, check_claim_record, check_group_record, check_lifecycle_notice,
    check_target_ledger_result,
};
use crate::contract::canonical::{parser_failure, store_gate};
use crate::contract::read::Read;
use crate::contract::{Args, Failure, Js, Out};

/// The result of `validateVersionedStoreRecord(value, version, parser)` as JSON, where
/// `check` is the parser's checks.
pub(crate) fn validate_store(value: &Js, version: &str, check: fn(&Js) -> Read<()>) -> String {
    let gate = store_gate(value, &Js::str(version));
    if !gate.starts_with(r#"{"ok":true"#) {
        return with_observed(gate, value);
    }
    match check(value) {
        Ok(()) => {
            let echoed = value.to_json().unwrap_or_else(|| "null".to_string());
            format!(r#"{{"ok":true,"status":"valid","value":{echoed}}}"#)
        }
        Err(refusal) => {
            let path = match (&refusal.path, refusal.class) {
                (Some(path), "ContractValidationError") => Js::str(path.as_str()),
                _ => Js::Undefined,
            };
            with_observed(parser_failure(&Js::str(refusal.message()), &path), value)
        }
    }
}

/// A failure result with the record's own version in its `observedVersion` placeholder (the
/// first member after `status`, whose values never contain it).
fn with_observed(result: String, value: &Js) -> String {
    const PLACEHOLDER: &str = r#""observedVersion":null"#;
    match value.get("version").and_then(Js::to_json) {
        Some(version) if result.contains(PLACEHOLDER) => {
            result.replacen(PLACEHOLDER, &format!(r#""observedVersion":{version}"#), 1)
        }
        _ => result,
    }
}

pub(super) fn lifecycle_notice_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(validate_store(
        a.get(0),
        LIFECYCLE_NOTICE_VERSION,
        check_lifecycle_notice,
    )))
}

pub(super) fn delivery_group_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(validate_store(
        a.get(0),
        DELIVERY_GROUP_VERSION,
        check_group_record,
    )))
}

pub(super) fn delivery_claim_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(validate_store(
        a.get(0),
        DELIVERY_CLAIM_VERSION,
        check_claim_record,
    )))
}

pub(super) fn target_ledger_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(validate_store(
        a.get(0),
        TARGET_LEDGER_RESULT_VERSION,
        check_target_ledger_result,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_nothing(_: &Js) -> Read<()> {
        Ok(())
    }

    fn refuse(_: &Js) -> Read<()> {
        Err(Failure::contract("$.x", "bad"))
    }

    #[test]
    fn the_gate_then_the_parser() {
        let json = |text: &str| Js::parse_snapshot(text).unwrap();
        assert_eq!(
            validate_store(&json(r#"{"version":"a.v1"}"#), "a.v1", check_nothing),
            r#"{"ok":true,"status":"valid","value":{"version":"a.v1"}}"#
        );
        let older = validate_store(&json(r#"{"version":"a.v0"}"#), "a.v1", check_nothing);
        assert!(
            older.contains(r#""status":"unsupported_older_version","observedVersion":"a.v0""#),
            "{older}"
        );
        let refused = validate_store(&json(r#"{"version":"a.v1"}"#), "a.v1", refuse);
        assert_eq!(
            refused,
            concat!(
                r#"{"ok":false,"status":"corrupt","observedVersion":"a.v1","path":"$.x","#,
                r#""message":"$.x: bad","preserveExisting":true,"mutationAllowed":false}"#
            )
        );
    }
}
