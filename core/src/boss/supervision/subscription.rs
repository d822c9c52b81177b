//! Lifecycle targets, predicates and subscriptions; lifecycle triggers; inactivity edge keys and
//! their transition ids.

use super::lease::{n, s, version};
use super::{
    ACTIVITY_BASES, INACTIVITY_MODES, LIFECYCLE_SUBSCRIPTION_VERSION, LIFECYCLE_TRIGGER_VERSION,
    Rec, SUBSCRIPTION_STATES, SUPERVISED_ROLES, fields, millis, num, own_dense_array, unproxied,
};
use crate::boss::delivery::DELIVERY_INTENTS;
use crate::boss::participant::PARTICIPANT_STATES;
use crate::contract::canonical::canonical_json;
use crate::contract::read::{Read, element, exact_keys, fail, field, member, one_of, record};
use crate::contract::{Failure, Js};

const INACTIVITY_EDGE_DOMAIN: &str = "orc-inactivity-edge-v1";
const PREDICATE_KINDS: &[&str] = &[
    "state_changed",
    "state_in",
    "failed",
    "stopped",
    "turn_settled",
    "inactive_for",
];
const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// `parseLifecycleTarget(value, path)`: an exact worker target (id and generation) or an exact
/// role target (run and role).
pub fn parse_lifecycle_target(v: &Js, path: &str) -> Read<Js> {
    unproxied(v, path)?;
    record(v, path)?;
    let f = fields(v, path);
    let kind = f.one_of("kind", &["worker", "role"])?;
    if kind == "worker" {
        exact_keys(v, &["kind", "workerId", "workerGeneration"], &[], path)?;
        return Ok(Rec::new()
            .put("kind", Js::str(kind))
            .put("workerId", s(f, "workerId")?)
            .put("workerGeneration", n(f, "workerGeneration", 1)?)
            .build());
    }
    exact_keys(v, &["kind", "bossRunId", "role"], &[], path)?;
    Ok(Rec::new()
        .put("kind", Js::str(kind))
        .put("bossRunId", s(f, "bossRunId")?)
        .put("role", Js::str(f.one_of("role", SUPERVISED_ROLES)?))
        .build())
}

/// The predicate list: non-empty, each `{kind}` or `{kind: "state_in", states}` with distinct
/// known states, kinds distinct. Answers the predicates and their kinds.
fn parse_predicates(value: &Js, path: &str) -> Read<(Js, Vec<&'static str>)> {
    let entries = own_dense_array(value, path)?;
    if entries.is_empty() {
        return fail(path, "must be a non-empty array");
    }
    let mut out = Vec::with_capacity(entries.len());
    let mut kinds = Vec::with_capacity(entries.len());
    for (index, entry) in entries.into_iter().enumerate() {
        let item = element(path, index);
        unproxied(entry, &item)?;
        record(entry, &item)?;
        let kind = one_of(
            field(entry, "kind"),
            PREDICATE_KINDS,
            &member(&item, "kind"),
        )?;
        let predicate = if kind == "state_in" {
            exact_keys(entry, &["kind", "states"], &[], &item)?;
            let states_path = member(&item, "states");
            let values = own_dense_array(field(entry, "states"), &states_path)?;
            let mut states: Vec<&str> = Vec::with_capacity(values.len());
            for (i, state) in values.into_iter().enumerate() {
                states.push(one_of(
                    state,
                    PARTICIPANT_STATES,
                    &element(&states_path, i),
                )?);
            }
            let unique = states
                .iter()
                .enumerate()
                .all(|(i, s)| !states[..i].contains(s));
            if states.is_empty() || !unique {
                return fail(&states_path, "must be non-empty and unique");
            }
            Rec::new()
                .put("kind", Js::str(kind))
                .put("states", super::strs(&states))
                .build()
        } else {
            exact_keys(entry, &["kind"], &[], &item)?;
            Rec::new().put("kind", Js::str(kind)).build()
        };
        out.push(predicate);
        kinds.push(kind);
    }
    if kinds
        .iter()
        .enumerate()
        .any(|(i, k)| kinds[..i].contains(k))
    {
        return fail(path, "predicate kinds must be unique");
    }
    Ok((Js::array(out), kinds))
}

fn opt_str(value: Option<&str>) -> Option<Js> {
    value.map(Js::str)
}

/// `parseLifecycleSubscription`.
pub fn parse_lifecycle_subscription(v: &Js) -> Read<Js> {
    unproxied(v, "$")?;
    record(v, "$")?;
    exact_keys(
        v,
        &[
            "version",
            "subscriptionId",
            "subscriberPrincipalId",
            "subscriberBindingEpoch",
            "subscriberBindingGeneration",
            "target",
            "followReplacement",
            "predicates",
            "cooldownMs",
            "delivery",
            "state",
            "triggerGeneration",
            "createdAt",
            "updatedAt",
        ],
        &[
            "lastSubscriberAuthorityTransitionId",
            "bossRunId",
            "inactivityMode",
            "inactiveAfterMs",
            "activityBasis",
            "maxFires",
            "expiresAt",
            "lastActivityAt",
            "dueAt",
            "lastSourceEventId",
        ],
        "$",
    )?;
    let f = fields(v, "$");
    version(f, LIFECYCLE_SUBSCRIPTION_VERSION)?;
    let (predicates, kinds) = parse_predicates(f.get("predicates"), "$.predicates")?;
    let inactive = kinds.contains(&"inactive_for");
    let mode = f.optional_one_of("inactivityMode", INACTIVITY_MODES)?;
    let after = f.optional_integer("inactiveAfterMs", 1)?;
    let basis = f.optional_one_of("activityBasis", ACTIVITY_BASES)?;
    let any = mode.is_some() || after.is_some() || basis.is_some();
    let complete = mode.is_some() && after.is_some() && basis.is_some();
    if (inactive && !complete) || (!inactive && any) {
        return fail(
            "$.predicates",
            concat!(
                "inactive_for requires inactivityMode, inactiveAfterMs, ",
                "and activityBasis, which are forbidden otherwise"
            ),
        );
    }
    let target = parse_lifecycle_target(f.get("target"), "$.target")?;
    let follow = f.boolean("followReplacement")?;
    let role_target = super::text(&target, "kind") == Some("role");
    if follow && !role_target {
        return fail("$.followReplacement", "requires an authorized role target");
    }
    let run = f.optional_string("bossRunId")?;
    if let Some(run) = run
        && role_target
        && Some(run) != super::text(&target, "bossRunId")
    {
        return fail("$.bossRunId", "must match the role target Boss run");
    }
    let created = f.timestamp("createdAt")?;
    let updated = f.timestamp("updatedAt")?;
    if millis(updated) < millis(created) {
        return fail("$.updatedAt", "must not precede createdAt");
    }
    let expires = f.optional_timestamp("expiresAt")?;
    if expires.is_some_and(|e| millis(e) < millis(created)) {
        return fail("$.expiresAt", "must not precede createdAt");
    }
    let last_activity = f.optional_timestamp("lastActivityAt")?;
    let due = f.optional_timestamp("dueAt")?;
    let last_transition = f.optional_string("lastSubscriberAuthorityTransitionId")?;
    let max_fires = f.optional_integer("maxFires", 1)?;
    let last_source = f.optional_string("lastSourceEventId")?;
    let trigger_generation = f.integer("triggerGeneration", 0)?;
    if !inactive && due.is_some() {
        return fail(
            "$.dueAt",
            "is supported only for inactive_for subscriptions",
        );
    }
    if let (Some(last), Some(due), Some(after)) = (last_activity, due, after) {
        // Timestamps are within ±8.64e15 ms, so the sum is exact in i64; it must also be a
        // JavaScript safe integer, as the TypeScript core requires.
        let earliest = millis(last) + after;
        if !(-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&earliest) {
            return fail(
                "$.dueAt",
                "lastActivityAt + inactiveAfterMs must be a finite safe-integer timestamp",
            );
        }
        if millis(due) < earliest {
            return fail(
                "$.dueAt",
                "must be at or after lastActivityAt + inactiveAfterMs",
            );
        }
    }
    if max_fires.is_some_and(|max| trigger_generation > max) {
        return fail("$.triggerGeneration", "must not exceed maxFires");
    }
    let head = Rec::new()
        .put("version", Js::str(LIFECYCLE_SUBSCRIPTION_VERSION))
        .put("subscriptionId", s(f, "subscriptionId")?)
        .put("subscriberPrincipalId", s(f, "subscriberPrincipalId")?)
        .put("subscriberBindingEpoch", n(f, "subscriberBindingEpoch", 1)?)
        .put(
            "subscriberBindingGeneration",
            n(f, "subscriberBindingGeneration", 1)?,
        );
    Ok(head
        .opt(
            "lastSubscriberAuthorityTransitionId",
            opt_str(last_transition),
        )
        .opt("bossRunId", opt_str(run))
        .put("target", target)
        .put("followReplacement", Js::Bool(follow))
        .put("predicates", predicates)
        .opt("inactivityMode", opt_str(mode))
        .opt("inactiveAfterMs", after.map(num))
        .opt("activityBasis", opt_str(basis))
        .put("cooldownMs", n(f, "cooldownMs", 0)?)
        .opt("maxFires", max_fires.map(num))
        .opt("expiresAt", opt_str(expires))
        .put("delivery", Js::str(f.one_of("delivery", DELIVERY_INTENTS)?))
        .put("state", Js::str(f.one_of("state", SUBSCRIPTION_STATES)?))
        .put("triggerGeneration", num(trigger_generation))
        .opt("lastActivityAt", opt_str(last_activity))
        .opt("dueAt", opt_str(due))
        .opt("lastSourceEventId", opt_str(last_source))
        .put("createdAt", Js::str(created))
        .put("updatedAt", Js::str(updated))
        .build())
}

/// `parseLifecycleTrigger`.
pub fn parse_lifecycle_trigger(v: &Js) -> Read<Js> {
    record(v, "$")?;
    exact_keys(
        v,
        &[
            "version",
            "triggerId",
            "subscriptionId",
            "triggerGeneration",
            "targetWorkerId",
            "targetWorkerGeneration",
            "predicateEdge",
            "sourceEventId",
            "transitionId",
            "subscriberBindingEpoch",
            "subscriberBindingGeneration",
            "deliveryGroupId",
            "deliveryGroupMembershipRevision",
            "recipientTransferGeneration",
            "createdAt",
        ],
        &[
            "noticeId",
            "satisfiedByNoticeId",
            "successorDeliveryGroupId",
            "acknowledgedAt",
        ],
        "$",
    )?;
    let version = field(v, "version");
    if version.as_str() != Some(LIFECYCLE_TRIGGER_VERSION) {
        return fail(
            "$.version",
            format!("unsupported version: {}", version.js_string()),
        );
    }
    let f = fields(v, "$");
    let group = f.string("deliveryGroupId")?;
    let successor = f.optional_string("successorDeliveryGroupId")?;
    let transfer = f.integer("recipientTransferGeneration", 0)?;
    if successor == Some(group) {
        return fail(
            "$.successorDeliveryGroupId",
            "must differ from deliveryGroupId",
        );
    }
    if successor.is_some() && transfer < 1 {
        return fail(
            "$.recipientTransferGeneration",
            "must be at least 1 when a successor group exists",
        );
    }
    let created = f.timestamp("createdAt")?;
    let acknowledged = f.optional_timestamp("acknowledgedAt")?;
    if acknowledged.is_some_and(|a| millis(a) < millis(created)) {
        return fail("$.acknowledgedAt", "must not precede createdAt");
    }
    let s = |key: &str| s(f, key);
    let n = |key: &str, min: i64| n(f, key, min);
    let o = |key: &str| f.optional_string(key).map(opt_str);
    Ok(Rec::new()
        .put("version", Js::str(LIFECYCLE_TRIGGER_VERSION))
        .put("triggerId", s("triggerId")?)
        .put("subscriptionId", s("subscriptionId")?)
        .put("triggerGeneration", n("triggerGeneration", 1)?)
        .put("targetWorkerId", s("targetWorkerId")?)
        .put("targetWorkerGeneration", n("targetWorkerGeneration", 1)?)
        .put("predicateEdge", s("predicateEdge")?)
        .put("sourceEventId", s("sourceEventId")?)
        .put("transitionId", s("transitionId")?)
        .put("subscriberBindingEpoch", n("subscriberBindingEpoch", 1)?)
        .put(
            "subscriberBindingGeneration",
            n("subscriberBindingGeneration", 1)?,
        )
        .put("deliveryGroupId", Js::str(group))
        .put(
            "deliveryGroupMembershipRevision",
            n("deliveryGroupMembershipRevision", 1)?,
        )
        .opt("noticeId", o("noticeId")?)
        .opt("satisfiedByNoticeId", o("satisfiedByNoticeId")?)
        .opt("successorDeliveryGroupId", opt_str(successor))
        .put("recipientTransferGeneration", num(transfer))
        .put("createdAt", Js::str(created))
        .opt("acknowledgedAt", opt_str(acknowledged))
        .build())
}

/// `parseInactivityEdgeKey`: every dimension of an inactivity edge, required.
pub fn parse_inactivity_edge_key(v: &Js) -> Read<Js> {
    record(v, "$")?;
    exact_keys(
        v,
        &[
            "workerId",
            "workerGeneration",
            "inactivityEpochId",
            "inactivityMode",
            "activityBasis",
            "inactiveAfterMs",
            "dueAt",
        ],
        &[],
        "$",
    )?;
    let f = fields(v, "$");
    let s = |key: &str| s(f, key);
    let n = |key: &str, min: i64| n(f, key, min);
    Ok(Rec::new()
        .put("workerId", s("workerId")?)
        .put("workerGeneration", n("workerGeneration", 1)?)
        .put("inactivityEpochId", s("inactivityEpochId")?)
        .put(
            "inactivityMode",
            Js::str(f.one_of("inactivityMode", INACTIVITY_MODES)?),
        )
        .put(
            "activityBasis",
            Js::str(f.one_of("activityBasis", ACTIVITY_BASES)?),
        )
        .put("inactiveAfterMs", n("inactiveAfterMs", 1)?)
        .put("dueAt", Js::str(f.timestamp("dueAt")?))
        .build())
}

/// `canonicalHash(domain, value)` of a value the caller built (or was given).
pub(crate) fn hash_of(domain: &str, value: &Js) -> Result<String, Failure> {
    let payload = canonical_json(value).map_err(|mut f| {
        // The TypeScript core's ContractValidationError has no `.code`.
        f.code = None;
        f
    })?;
    Ok(crate::canonical::hash_of_payload(domain, &payload).expect("a valid domain"))
}

/// `inactivityTransitionId(key)`: the hash of the parsed edge key.
pub fn inactivity_transition_id(v: &Js) -> Read<String> {
    hash_of(INACTIVITY_EDGE_DOMAIN, &parse_inactivity_edge_key(v)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(text: &str) -> Js {
        Js::parse_snapshot(text).unwrap()
    }

    fn message(result: Read<Js>) -> String {
        result.unwrap_err().message()
    }

    #[test]
    fn targets_are_exact_by_kind() {
        let worker = js(r#"{"kind":"worker","workerId":"w","workerGeneration":1}"#);
        assert_eq!(parse_lifecycle_target(&worker, "$").unwrap(), worker);
        assert_eq!(
            message(parse_lifecycle_target(
                &js(r#"{"kind":"role","bossRunId":"r","role":"manager","workerId":"w"}"#),
                "$.t"
            )),
            "$.t.workerId: is not supported"
        );
        assert_eq!(
            message(parse_lifecycle_target(&js("p"), "$.t")),
            "$.t: Proxy values are not supported"
        );
        assert_eq!(
            message(parse_lifecycle_target(&js(r#"{"kind":"x"}"#), "$")),
            "$.kind: must be one of: worker, role"
        );
    }

    #[test]
    fn predicates_are_unique_and_known() {
        let (list, kinds) =
            parse_predicates(&js(r#"[{"kind":"state_in","states":["ready"]}]"#), "$.p").unwrap();
        assert_eq!(kinds, ["state_in"]);
        assert_eq!(
            list.to_json().unwrap(),
            r#"[{"kind":"state_in","states":["ready"]}]"#
        );
        for (text, want) in [
            ("[]", "$.p: must be a non-empty array"),
            (
                r#"[{"kind":"failed"},{"kind":"failed"}]"#,
                "$.p: predicate kinds must be unique",
            ),
            (
                r#"[{"kind":"state_in","states":["ready","ready"]}]"#,
                "$.p[0].states: must be non-empty and unique",
            ),
            (
                r#"[{"kind":"state_in","states":[_]}]"#,
                "$.p[0].states[0]: sparse array holes are not supported",
            ),
            ("[p]", "$.p[0]: Proxy values are not supported"),
            ("p", "$.p: Proxy values are not supported"),
            (r#"[{"kind":"failed","x":1}]"#, "$.p[0].x: is not supported"),
        ] {
            assert_eq!(
                parse_predicates(&js(text), "$.p").unwrap_err().message(),
                want
            );
        }
    }

    #[test]
    fn edge_keys_hash_to_the_published_transition_ids() {
        let edge = js(concat!(
            r#"{"workerId":"worker-a","workerGeneration":7,"#,
            r#""inactivityEpochId":"inactive-epoch-1","#,
            r#""inactivityMode":"smart","activityBasis":"meaningful","inactiveAfterMs":60000,"#,
            r#""dueAt":"2026-07-28T12:01:00.000Z"}"#
        ));
        assert_eq!(
            inactivity_transition_id(&edge).unwrap(),
            "0db9f264c21905c17728172782dbcc7e79dc1fbf8aa4d3e6aae1b1233daec1a3"
        );
    }
}
