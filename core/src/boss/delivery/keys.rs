//! The two identities (a notice's logical key, a group's delivery equivalence key), their
//! hashes, and the monotonic intent aggregate.

use super::{DELIVERY_INTENTS, path_argument, without_code};
use crate::canonical::hash_of_payload;
use crate::contract::canonical::canonical_json;
use crate::contract::read::{
    self, dense_array, element, exact_keys, fail, field, identifier, integer, member, one_of,
    optional, optional_identifier, record,
};
use crate::contract::{Args, Failure, Js, Out};

const NOTICE_ID_DOMAIN: &str = "orc-notice-v1";
const DELIVERY_GROUP_ID_DOMAIN: &str = "orc-delivery-group-v1";
const SOURCE_AUTHORITY_KINDS: &[&str] = &["worker_store", "controller", "orc_scheduler"];

/// `canonicalHash(domain, value)` for one of this module's domains.
fn hash(domain: &str, value: &Js) -> read::Read<String> {
    let payload = canonical_json(value).map_err(without_code)?;
    Ok(hash_of_payload(domain, &payload).expect("the delivery domains are valid"))
}

/// The worker and transition both keys name: identifiers and generations ≥ 1.
fn worker_transition(v: &Js, path: &str) -> read::Read<()> {
    let at = |key: &str| member(path, key);
    identifier(field(v, "workerId"), &at("workerId"))?;
    integer(field(v, "workerGeneration"), &at("workerGeneration"), 1)?;
    identifier(field(v, "transitionId"), &at("transitionId"))?;
    integer(field(v, "transitionVersion"), &at("transitionVersion"), 1)?;
    Ok(())
}

/// A lifecycle notice's logical key at `path`: identifiers, generations ≥ 1, and the
/// subscription pair present together.
fn check_logical_key(v: &Js, path: &str) -> read::Read<()> {
    record(v, path)?;
    exact_keys(
        v,
        &[
            "workerId",
            "workerGeneration",
            "transitionId",
            "transitionVersion",
            "kind",
        ],
        &[
            "assignmentId",
            "watchdogGeneration",
            "subscriptionId",
            "subscriptionTriggerGeneration",
        ],
        path,
    )?;
    let at = |key: &str| member(path, key);
    worker_transition(v, path)?;
    identifier(field(v, "kind"), &at("kind"))?;
    optional_identifier(field(v, "assignmentId"), &at("assignmentId"))?;
    optional(field(v, "watchdogGeneration"), |g| {
        integer(g, &at("watchdogGeneration"), 1)
    })?;
    let subscription = optional_identifier(field(v, "subscriptionId"), &at("subscriptionId"))?;
    let trigger = optional(field(v, "subscriptionTriggerGeneration"), |g| {
        integer(g, &at("subscriptionTriggerGeneration"), 1)
    })?;
    if subscription.is_some() != trigger.is_some() {
        return fail(
            path,
            "subscriptionId and subscriptionTriggerGeneration must be present together",
        );
    }
    Ok(())
}

/// `lifecycleNoticeId(key)`: the key checked, then `canonicalHash("orc-notice-v1", key)`.
pub fn lifecycle_notice_id(key: &Js) -> read::Read<String> {
    check_logical_key(key, "$")?;
    hash(NOTICE_ID_DOMAIN, key)
}

pub(super) fn lifecycle_notice_id_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(json_text(&lifecycle_notice_id(a.get(0))?)))
}

/// The source authority at `path`: its kind first, then exactly that kind's members. Answers
/// the controller's `bossRunId` for a controller authority.
fn check_source_authority<'v>(v: &'v Js, path: &str) -> read::Read<Option<&'v str>> {
    record(v, path)?;
    let at = |key: &str| member(path, key);
    let kind = one_of(field(v, "kind"), SOURCE_AUTHORITY_KINDS, &at("kind"))?;
    match kind {
        "worker_store" => {
            exact_keys(
                v,
                &["kind", "workerStoreId", "journalGeneration"],
                &[],
                path,
            )?;
            identifier(field(v, "workerStoreId"), &at("workerStoreId"))?;
            integer(field(v, "journalGeneration"), &at("journalGeneration"), 1)?;
            Ok(None)
        }
        "controller" => {
            exact_keys(v, &["kind", "bossRunId", "controllerGeneration"], &[], path)?;
            let run = identifier(field(v, "bossRunId"), &at("bossRunId"))?;
            integer(
                field(v, "controllerGeneration"),
                &at("controllerGeneration"),
                1,
            )?;
            Ok(Some(run))
        }
        _ => {
            exact_keys(v, &["kind", "ownerUid", "schedulerGeneration"], &[], path)?;
            integer(field(v, "ownerUid"), &at("ownerUid"), 0)?;
            integer(
                field(v, "schedulerGeneration"),
                &at("schedulerGeneration"),
                1,
            )?;
            Ok(None)
        }
    }
}

/// `parseDeliveryEquivalenceKey(value, path)`'s checks: a controller source authority names the
/// key's own `bossRunId`, which is then required.
pub fn check_equivalence_key(v: &Js, path: &str) -> read::Read<()> {
    record(v, path)?;
    exact_keys(
        v,
        &[
            "recipientPrincipalId",
            "recipientBindingEpoch",
            "sourceAuthorityId",
            "sourceEventId",
            "workerId",
            "workerGeneration",
            "transitionId",
            "transitionVersion",
        ],
        &["bossRunId", "assignmentId", "turnId", "watchdogGeneration"],
        path,
    )?;
    let at = |key: &str| member(path, key);
    identifier(
        field(v, "recipientPrincipalId"),
        &at("recipientPrincipalId"),
    )?;
    integer(
        field(v, "recipientBindingEpoch"),
        &at("recipientBindingEpoch"),
        1,
    )?;
    let authority_path = at("sourceAuthorityId");
    let controller_run = check_source_authority(field(v, "sourceAuthorityId"), &authority_path)?;
    identifier(field(v, "sourceEventId"), &at("sourceEventId"))?;
    let run = optional_identifier(field(v, "bossRunId"), &at("bossRunId"))?;
    if let Some(controller_run) = controller_run {
        let Some(run) = run else {
            return fail(
                &at("bossRunId"),
                "is required for a controller source authority",
            );
        };
        if controller_run != run {
            return fail(
                &member(&authority_path, "bossRunId"),
                "must exactly match bossRunId for a controller source authority",
            );
        }
    }
    worker_transition(v, path)?;
    optional_identifier(field(v, "assignmentId"), &at("assignmentId"))?;
    optional_identifier(field(v, "turnId"), &at("turnId"))?;
    optional(field(v, "watchdogGeneration"), |g| {
        integer(g, &at("watchdogGeneration"), 1)
    })?;
    Ok(())
}

pub(super) fn parse_equivalence_key_op(a: Args<'_>) -> Result<Out, Failure> {
    check_equivalence_key(a.get(0), &path_argument(a.get(1)))?;
    Ok(Out::Input(0))
}

/// `deliveryGroupId(key)`: the key checked, then `canonicalHash("orc-delivery-group-v1", key)`.
pub fn delivery_group_id(key: &Js) -> read::Read<String> {
    check_equivalence_key(key, "$")?;
    hash(DELIVERY_GROUP_ID_DOMAIN, key)
}

pub(super) fn delivery_group_id_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(json_text(&delivery_group_id(a.get(0))?)))
}

/// The strongest intent present: `wake` > `follow_up` > `status_only` (`status_only` for none).
pub fn effective_intent(intents: &[&str]) -> &'static str {
    DELIVERY_INTENTS
        .iter()
        .find(|intent| intents.contains(intent))
        .copied()
        .unwrap_or("status_only")
}

/// `effectiveDeliveryIntent(intents)`: a dense array of intents (paths `intents[i]`), their
/// aggregate (supervision's `aggregateDeliveryIntent` answers the same).
pub fn effective_delivery_intent(intents: &Js) -> read::Read<&'static str> {
    let entries = dense_array(intents, "intents")?;
    let intents = entries
        .into_iter()
        .enumerate()
        .map(|(i, intent)| one_of(intent, DELIVERY_INTENTS, &element("intents", i)))
        .collect::<read::Read<Vec<_>>>()?;
    Ok(effective_intent(&intents))
}

pub(super) fn effective_intent_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(json_text(effective_delivery_intent(a.get(0))?)))
}

/// A string as JSON text.
pub(super) fn json_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    crate::contract::value::write_json_string(&mut out, text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(text: &str) -> Js {
        Js::parse_snapshot(text).unwrap()
    }

    #[test]
    fn intents_aggregate_monotonically() {
        assert_eq!(effective_intent(&[]), "status_only");
        assert_eq!(effective_intent(&["status_only", "follow_up"]), "follow_up");
        assert_eq!(effective_intent(&["follow_up", "wake"]), "wake");
        let of = |text: &str| effective_delivery_intent(&js(text));
        assert_eq!(of(r#"["follow_up","wake","status_only"]"#).unwrap(), "wake");
        assert_eq!(
            of(r#"["interrupt"]"#).unwrap_err().message(),
            "intents[0]: must be one of: wake, follow_up, status_only"
        );
        assert_eq!(of("{}").unwrap_err().message(), "intents: must be an array");
    }

    #[test]
    fn an_undefined_optional_member_is_refused_by_the_hash() {
        let key = js(
            r#"{"workerId":"w","workerGeneration":1,"transitionId":"t","transitionVersion":1,
            "kind":"k","assignmentId":u}"#,
        );
        let refused = lifecycle_notice_id(&key).unwrap_err();
        assert_eq!(
            refused.message(),
            "$.assignmentId: undefined is not a canonical value"
        );
        assert_eq!(refused.code, None);
    }

    #[test]
    fn a_controller_authority_names_the_key_run() {
        let key = |run: &str| {
            js(&format!(
                r#"{{"recipientPrincipalId":"m","recipientBindingEpoch":1,
                "sourceAuthorityId":{{"kind":"controller","bossRunId":"r",
                "controllerGeneration":1}},
                "sourceEventId":"e","workerId":"w","workerGeneration":1,"transitionId":"t",
                "transitionVersion":1{run}}}"#
            ))
        };
        assert!(check_equivalence_key(&key(r#","bossRunId":"r""#), "$").is_ok());
        assert_eq!(
            check_equivalence_key(&key(""), "$.k")
                .unwrap_err()
                .message(),
            "$.k.bossRunId: is required for a controller source authority"
        );
        assert_eq!(
            check_equivalence_key(&key(r#","bossRunId":"x""#), "$")
                .unwrap_err()
                .path
                .as_deref(),
            Some("$.sourceAuthorityId.bossRunId")
        );
    }
}
