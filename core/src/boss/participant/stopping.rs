//! Legacy `stopping`: a worker migrated while stopping stays read-only and state-less until
//! direct systemd/cgroup evidence (`LegacyStoppingReconciliationV1`) settles it
//! (`reconcileLegacyStoppingWorker`): stopped, failed or lost as observed, or unreachable once
//! the bounded settle window expired unresolved.

use super::migration::{
    Mapping, MigratedWorkerRecord, before, check_semantics, parse_migrated_record,
};
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

/// `reconcileLegacyStoppingWorker(pending, evidence)`: the pending record settled by matching
/// direct evidence observed no earlier than the migration.
pub fn reconcile_legacy_stopping_worker(pending: &Js, evidence: &Js) -> Read<MigratedWorkerRecord> {
    let pending = parse_migrated_record(pending, "$")?;
    let evidence = parse_stopping_reconciliation(evidence, "$")?;
    if pending.mapping.migration_status != "pending_stopping_reconciliation"
        || pending.migration_audit.original_state != "stopping"
    {
        return fail(
            "$.migrationStatus",
            "worker is not pending legacy stopping reconciliation",
        );
    }
    if evidence.worker_id != pending.worker_id
        || evidence.worker_incarnation_id != pending.worker_incarnation_id
        || evidence.worker_generation != pending.worker_generation
    {
        return fail(
            "$.evidence",
            "worker identity or generation does not match the pending record",
        );
    }
    if before(&evidence.observed_at, &pending.migration_audit.migrated_at) {
        return fail(
            "$.evidence.observedAt",
            "must not precede the pending migration",
        );
    }
    let (state, reason) = evidence.settles();
    let settled = MigratedWorkerRecord {
        mapping: Mapping {
            state: Some(state),
            reason,
            migration_status: "complete",
            read_only: false,
            ..pending.mapping
        },
        stopping_reconciliation: Some(evidence),
        ..pending
    };
    // The settled record is read back as a stored one would be.
    check_semantics(&settled, "$")?;
    Ok(settled)
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

pub(super) fn reconcile_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(
        reconcile_legacy_stopping_worker(a.get(0), a.get(1))?.to_json(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boss::participant::migration::migrate_legacy_worker_record;

    fn input(state: &str) -> Js {
        Js::parse_json(&format!(
            r#"{{"version":1,"sourceStoreVersion":1,"targetStoreVersion":2,"workerId":"w",
            "legacyRunId":"run/é","deprecatedAgentIntercomRunId":null,"legacyState":"{state}",
            "legacyOutcome":null,"workerGenerationFloor":2,"assignedWorkerGeneration":3,
            "migratedAt":"2026-07-28T12:00:00.000Z"}}"#
        ))
        .unwrap()
    }

    #[test]
    fn stopping_settles_with_matching_evidence() {
        let pending = migrate_legacy_worker_record(&input("stopping")).unwrap();
        let pending = Js::parse_json(&pending.to_json()).unwrap();
        let evidence = |outcome: &str, expired: bool, at: &str| {
            Js::parse_json(&format!(
                r#"{{"version":1,"workerId":"w","workerIncarnationId":"run/é","workerGeneration":3,
                "observationId":"o","evidenceSource":"cgroup","outcome":"{outcome}",
                "boundedSettleWindowExpired":{expired},"observedAt":"{at}"}}"#
            ))
            .unwrap()
        };
        let t = "2026-07-28T12:00:00.000Z";
        let settled = reconcile_legacy_stopping_worker(
            &pending,
            &evidence("unresolved_after_settle", true, t),
        )
        .unwrap();
        assert_eq!(settled.mapping.state, Some("unreachable"));
        assert_eq!(
            settled.mapping.reason.as_deref(),
            Some("legacy_stopping_unresolved")
        );
        let early = "2026-07-28T11:59:59.999Z";
        assert_eq!(
            reconcile_legacy_stopping_worker(&pending, &evidence("lost", false, early))
                .unwrap_err()
                .to_string(),
            "$.evidence.observedAt: must not precede the pending migration"
        );
        assert_eq!(
            parse_stopping_reconciliation(&evidence("lost", true, t), "$")
                .unwrap_err()
                .to_string(),
            concat!(
                "$.boundedSettleWindowExpired: must be false when direct evidence establishes ",
                "a terminal outcome"
            )
        );
        let settled = Js::parse_json(&settled.to_json()).unwrap();
        assert_eq!(
            reconcile_legacy_stopping_worker(&settled, &evidence("lost", false, t))
                .unwrap_err()
                .to_string(),
            "$.migrationStatus: worker is not pending legacy stopping reconciliation"
        );
    }
}
