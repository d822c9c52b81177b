//! `LegacyStoppingReconciliationV1`: the direct systemd/cgroup evidence that settles a worker
//! migrated while `stopping` (read-only and state-less until then): stopped, failed or lost as
//! observed, or unreachable once the bounded settle window expired unresolved. The settling itself
//! (`reconcileLegacyStoppingWorker`) is [`super::migration`]'s, beside the migrated record that
//! carries this evidence.

use super::{
    STOPPING_EVIDENCE_SOURCES, STOPPING_RECONCILIATION_OUTCOMES,
    WORKER_STATE_MIGRATION_CONTRACT_VERSION, literal_integer, store_result,
};
use crate::boss::JsonObject;
use crate::contract::read::{
    Read, boolean, exact_record, fail, field, integer, member, one_of, string, timestamp,
};
use crate::contract::{Args, Failure, Js, Out, ops};

const STOPPING_KEYS: &[&str] = &[
    "version",
    "workerId",
    "workerIncarnationId",
    "workerGeneration",
    "observationId",
    "evidenceSource",
    "outcome",
    "boundedSettleWindowExpired",
    "observedAt",
];

/// A parsed `LegacyStoppingReconciliationV1`: direct systemd/cgroup evidence about a worker
/// migrated while `stopping`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoppingReconciliation {
    /// `workerId`.
    pub worker_id: String,
    /// `workerIncarnationId`.
    pub worker_incarnation_id: String,
    /// `workerGeneration`.
    pub worker_generation: i64,
    /// `observationId`.
    pub observation_id: String,
    /// One of [`STOPPING_EVIDENCE_SOURCES`].
    pub evidence_source: &'static str,
    /// One of [`STOPPING_RECONCILIATION_OUTCOMES`].
    pub outcome: &'static str,
    /// True exactly for `unresolved_after_settle`.
    pub bounded_settle_window_expired: bool,
    /// `observedAt`.
    pub observed_at: String,
}

impl StoppingReconciliation {
    /// The evidence as JSON, in the TypeScript member order.
    pub fn to_json(&self) -> String {
        JsonObject::new()
            .int("version", WORKER_STATE_MIGRATION_CONTRACT_VERSION)
            .str("workerId", &self.worker_id)
            .str("workerIncarnationId", &self.worker_incarnation_id)
            .int("workerGeneration", self.worker_generation)
            .str("observationId", &self.observation_id)
            .str("evidenceSource", self.evidence_source)
            .str("outcome", self.outcome)
            .bool(
                "boundedSettleWindowExpired",
                self.bounded_settle_window_expired,
            )
            .str("observedAt", &self.observed_at)
            .finish()
    }

    /// The canonical state and reason this evidence settles.
    pub(super) fn settles(&self) -> (&'static str, Option<String>) {
        match self.outcome {
            "unresolved_after_settle" => ("unreachable", Some("legacy_stopping_unresolved".into())),
            outcome => (outcome, None),
        }
    }
}

/// `parseLegacyStoppingReconciliationV1(value, path = "$")`.
pub fn parse_stopping_reconciliation(v: &Js, path: &str) -> Read<StoppingReconciliation> {
    exact_record(v, STOPPING_KEYS, &[], path)?;
    let at = |key: &str| member(path, key);
    let text = |key: &str| -> Read<String> { Ok(string(field(v, key), &at(key))?.to_string()) };
    literal_integer(
        field(v, "version"),
        WORKER_STATE_MIGRATION_CONTRACT_VERSION,
        &at("version"),
    )?;
    let evidence = StoppingReconciliation {
        worker_id: text("workerId")?,
        worker_incarnation_id: text("workerIncarnationId")?,
        worker_generation: integer(field(v, "workerGeneration"), &at("workerGeneration"), 1)?,
        observation_id: text("observationId")?,
        evidence_source: one_of(
            field(v, "evidenceSource"),
            STOPPING_EVIDENCE_SOURCES,
            &at("evidenceSource"),
        )?,
        outcome: one_of(
            field(v, "outcome"),
            STOPPING_RECONCILIATION_OUTCOMES,
            &at("outcome"),
        )?,
        bounded_settle_window_expired: boolean(
            field(v, "boundedSettleWindowExpired"),
            &at("boundedSettleWindowExpired"),
        )?,
        observed_at: timestamp(field(v, "observedAt"), &at("observedAt"))?.to_string(),
    };
    let unresolved = evidence.outcome == "unresolved_after_settle";
    if unresolved && !evidence.bounded_settle_window_expired {
        return fail(
            &at("boundedSettleWindowExpired"),
            "must be true for unresolved_after_settle",
        );
    }
    if !unresolved && evidence.bounded_settle_window_expired {
        return fail(
            &at("boundedSettleWindowExpired"),
            "must be false when direct evidence establishes a terminal outcome",
        );
    }
    Ok(evidence)
}

pub(super) fn parse_stopping_op(a: Args<'_>) -> Result<Out, Failure> {
    let path = ops::path(a, 1, "$")?;
    Ok(Out::Json(
        parse_stopping_reconciliation(a.get(0), &path)?.to_json(),
    ))
}

pub(super) fn stopping_store_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(store_result(
        a.get(0),
        WORKER_STATE_MIGRATION_CONTRACT_VERSION,
        |v| parse_stopping_reconciliation(v, "$").map(|e| e.to_json()),
    )))
}
