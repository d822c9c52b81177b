//! The store validators of the delivery records: `validateVersionedStoreRecord(value,
//! VERSION, parser)` for notices, groups, claims and target-ledger results. They never throw:
//! a record that is not exactly the current version, or that its parser refuses, is a
//! fail-closed result (`preserveExisting: true`, `mutationAllowed: false`), never a default.
//!
//! The gate is [`crate::boss::store`]'s: `observedVersion` is the record's version as JSON
//! (`null` where JSON has no form for it, `NaN` say), and a valid record's `value` is the
//! record's JSON. The Node binding puts the caller's own version and record there instead, as
//! `validateVersionedStoreRecord` does.

use super::{
    DELIVERY_CLAIM_VERSION, DELIVERY_GROUP_VERSION, LIFECYCLE_NOTICE_VERSION,
    TARGET_LEDGER_RESULT_VERSION, check_claim_record, check_group_record, check_lifecycle_notice,
    check_target_ledger_result,
};
use crate::boss::store::{self, StoreVersion};
use crate::contract::read::Read;
use crate::contract::{Args, Failure, Js, Out};

/// The result of `validateVersionedStoreRecord(value, version, parser)` as JSON, where
/// `check` is the parser's checks (the parser returns the record itself): [`store::validate`].
pub(crate) fn validate_store(
    value: &Js,
    version: &'static str,
    check: fn(&Js) -> Read<()>,
) -> String {
    store::validate(value, StoreVersion::Text(version), |v| {
        check(v).map(|()| Out::Input(0))
    })
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
