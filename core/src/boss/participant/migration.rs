//! The frozen WorkerStore v1 -> v2 projection (`migrateLegacyWorkerRecordV1`), the migrated
//! record's reader with its semantic checks (`parseMigratedWorkerRecordV2`), and the direct
//! process evidence that settles a legacy `stopping` worker (`reconcileLegacyStoppingWorker`).
//!
//! The legacy `runId` stays the worker's incarnation byte for byte, the deprecated
//! `AGENT_INTERCOM_RUN_ID` is audit only (a migrated record has no `bossRunId`), no migrated
//! record is dispatchable, and `stopping` stays read-only and state-less until evidence comes.

use super::stopping::{StoppingReconciliation, parse_stopping_reconciliation};
use super::{
    BLOCKED_RESUME_STATES, CANONICAL_WORKER_STORE_SCHEMA_VERSION, LEGACY_WORKER_STATES,
    LEGACY_WORKER_STORE_SCHEMA_VERSION, WORKER_STATE_MIGRATION_CONTRACT_VERSION, json_or_null,
    literal_integer, nullable_string, parse_participant_state, store_result,
};
use crate::boss::JsonObject;
use crate::contract::read::{
    Read, boolean, exact_record, fail, field, integer, member, one_of, parse_timestamp, string,
    timestamp,
};
use crate::contract::{Args, Failure, Js, Out, ops};

const INPUT_KEYS: &[&str] = &[
    "version",
    "sourceStoreVersion",
    "targetStoreVersion",
    "workerId",
    "legacyRunId",
    "deprecatedAgentIntercomRunId",
    "legacyState",
    "legacyOutcome",
    "workerGenerationFloor",
    "assignedWorkerGeneration",
    "migratedAt",
];

const AUDIT_KEYS: &[&str] = &[
    "version",
    "sourceStoreVersion",
    "targetStoreVersion",
    "sourceIncarnationField",
    "originalRunId",
    "originalDeprecatedAgentIntercomRunId",
    "originalState",
    "originalOutcome",
    "workerGenerationFloor",
    "migratedAt",
];

const RECORD_KEYS: &[&str] = &[
    "schemaVersion",
    "workerId",
    "workerIncarnationId",
    "workerGeneration",
    "state",
    "resumeState",
    "reason",
    "terminalOutcome",
    "requiresReadinessReconciliation",
    "legacyIdleHint",
    "migrationStatus",
    "readOnly",
    "dispatchAllowed",
    "migrationAudit",
    "stoppingReconciliation",
];

const MIGRATION_STATUSES: &[&str] = &["complete", "pending_stopping_reconciliation"];

/// The legacy field the incarnation comes from.
const SOURCE_INCARNATION_FIELD: &str = "runId";

/// A parsed `LegacyWorkerMigrationInputV1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigrationInput {
    /// `workerId`.
    pub worker_id: String,
    /// `legacyRunId`: the v1 incarnation id, never Boss authority.
    pub legacy_run_id: String,
    /// `deprecatedAgentIntercomRunId`: audit only.
    pub deprecated_agent_intercom_run_id: Option<String>,
    /// One of [`LEGACY_WORKER_STATES`].
    pub legacy_state: &'static str,
    /// `legacyOutcome`.
    pub legacy_outcome: Option<String>,
    /// The highest generation already persisted for this worker (0 for none).
    pub worker_generation_floor: i64,
    /// The generation the migrated record gets: above the floor.
    pub assigned_worker_generation: i64,
    /// `migratedAt`.
    pub migrated_at: String,
}

impl MigrationInput {
    /// The input as JSON, in the TypeScript member order.
    pub fn to_json(&self) -> String {
        versions(JsonObject::new().int("version", WORKER_STATE_MIGRATION_CONTRACT_VERSION))
            .str("workerId", &self.worker_id)
            .str("legacyRunId", &self.legacy_run_id)
            .raw(
                "deprecatedAgentIntercomRunId",
                &json_or_null(self.deprecated_agent_intercom_run_id.as_deref()),
            )
            .str("legacyState", self.legacy_state)
            .raw(
                "legacyOutcome",
                &json_or_null(self.legacy_outcome.as_deref()),
            )
            .int("workerGenerationFloor", self.worker_generation_floor)
            .int("assignedWorkerGeneration", self.assigned_worker_generation)
            .str("migratedAt", &self.migrated_at)
            .finish()
    }
}

fn versions(o: JsonObject) -> JsonObject {
    o.int("sourceStoreVersion", LEGACY_WORKER_STORE_SCHEMA_VERSION)
        .int("targetStoreVersion", CANONICAL_WORKER_STORE_SCHEMA_VERSION)
}

/// A parsed `WorkerStateMigrationAuditV1`: what the v1 record said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigrationAudit {
    /// `originalRunId`.
    pub original_run_id: String,
    /// `originalDeprecatedAgentIntercomRunId`.
    pub original_deprecated_agent_intercom_run_id: Option<String>,
    /// `originalState`.
    pub original_state: &'static str,
    /// `originalOutcome`.
    pub original_outcome: Option<String>,
    /// `workerGenerationFloor`.
    pub worker_generation_floor: i64,
    /// `migratedAt`.
    pub migrated_at: String,
}

impl MigrationAudit {
    fn of(input: &MigrationInput) -> MigrationAudit {
        MigrationAudit {
            original_run_id: input.legacy_run_id.clone(),
            original_deprecated_agent_intercom_run_id: input
                .deprecated_agent_intercom_run_id
                .clone(),
            original_state: input.legacy_state,
            original_outcome: input.legacy_outcome.clone(),
            worker_generation_floor: input.worker_generation_floor,
            migrated_at: input.migrated_at.clone(),
        }
    }

    fn to_json(&self) -> String {
        versions(JsonObject::new().int("version", WORKER_STATE_MIGRATION_CONTRACT_VERSION))
            .str("sourceIncarnationField", SOURCE_INCARNATION_FIELD)
            .str("originalRunId", &self.original_run_id)
            .raw(
                "originalDeprecatedAgentIntercomRunId",
                &json_or_null(self.original_deprecated_agent_intercom_run_id.as_deref()),
            )
            .str("originalState", self.original_state)
            .raw(
                "originalOutcome",
                &json_or_null(self.original_outcome.as_deref()),
            )
            .int("workerGenerationFloor", self.worker_generation_floor)
            .str("migratedAt", &self.migrated_at)
            .finish()
    }
}

/// The state half of a migrated record: what the legacy state maps to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// The canonical state; `None` only while legacy `stopping` awaits evidence.
    pub state: Option<&'static str>,
    /// The persisted recovery target; present exactly while the state is `blocked`.
    pub resume_state: Option<&'static str>,
    /// `reason`.
    pub reason: Option<String>,
    /// `terminalOutcome`.
    pub terminal_outcome: Option<String>,
    /// `requiresReadinessReconciliation`.
    pub requires_readiness_reconciliation: bool,
    /// `legacyIdleHint`: audit only, never readiness.
    pub legacy_idle_hint: bool,
    /// `complete` or `pending_stopping_reconciliation`.
    pub migration_status: &'static str,
    /// `readOnly`.
    pub read_only: bool,
}

impl Mapping {
    fn complete(state: &'static str) -> Mapping {
        Mapping {
            state: Some(state),
            resume_state: None,
            reason: None,
            terminal_outcome: None,
            requires_readiness_reconciliation: false,
            legacy_idle_hint: false,
            migration_status: "complete",
            read_only: false,
        }
    }

    fn pending() -> Mapping {
        Mapping {
            state: None,
            migration_status: "pending_stopping_reconciliation",
            read_only: true,
            ..Mapping::complete("stopped")
        }
    }

    /// The frozen mapping of a legacy state other than `stopping`.
    fn of_legacy(state: &'static str, outcome: Option<&str>) -> Mapping {
        let registering = Mapping {
            requires_readiness_reconciliation: true,
            ..Mapping::complete("registering")
        };
        let with_reason = |state, default: &str| Mapping {
            reason: Some(outcome.unwrap_or(default).to_string()),
            ..Mapping::complete(state)
        };
        match state {
            "running" => registering,
            "idle" => Mapping {
                legacy_idle_hint: true,
                ..registering
            },
            "needs_attention" => Mapping {
                resume_state: Some("registering"),
                reason: Some("legacy_needs_attention".into()),
                ..Mapping::complete("blocked")
            },
            "completed" => Mapping {
                terminal_outcome: Some("completed".into()),
                ..Mapping::complete("stopped")
            },
            "failed" => with_reason("failed", "legacy_failed"),
            "lost" => with_reason("lost", "legacy_lost"),
            "stopping" => Mapping::pending(),
            // provisioning and stopped keep their names.
            other => Mapping::complete(other),
        }
    }

    fn write(&self, o: JsonObject) -> JsonObject {
        o.raw("state", &json_or_null(self.state))
            .raw("resumeState", &json_or_null(self.resume_state))
            .raw("reason", &json_or_null(self.reason.as_deref()))
            .raw(
                "terminalOutcome",
                &json_or_null(self.terminal_outcome.as_deref()),
            )
            .bool(
                "requiresReadinessReconciliation",
                self.requires_readiness_reconciliation,
            )
            .bool("legacyIdleHint", self.legacy_idle_hint)
            .str("migrationStatus", self.migration_status)
            .bool("readOnly", self.read_only)
    }
}

/// A parsed `MigratedWorkerRecordV2` (its `dispatchAllowed` is always false).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigratedWorkerRecord {
    /// `workerId`.
    pub worker_id: String,
    /// `workerIncarnationId`: the legacy `runId`.
    pub worker_incarnation_id: String,
    /// `workerGeneration`.
    pub worker_generation: i64,
    /// The state members.
    pub mapping: Mapping,
    /// `migrationAudit`.
    pub migration_audit: MigrationAudit,
    /// `stoppingReconciliation`: the evidence that settled a legacy `stopping` worker.
    pub stopping_reconciliation: Option<StoppingReconciliation>,
}

impl MigratedWorkerRecord {
    /// The record as JSON, in the TypeScript member order.
    pub fn to_json(&self) -> String {
        let o = JsonObject::new()
            .int("schemaVersion", CANONICAL_WORKER_STORE_SCHEMA_VERSION)
            .str("workerId", &self.worker_id)
            .str("workerIncarnationId", &self.worker_incarnation_id)
            .int("workerGeneration", self.worker_generation);
        let stopping = match &self.stopping_reconciliation {
            Some(e) => e.to_json(),
            None => "null".into(),
        };
        self.mapping
            .write(o)
            .bool("dispatchAllowed", false)
            .raw("migrationAudit", &self.migration_audit.to_json())
            .raw("stoppingReconciliation", &stopping)
            .finish()
    }
}

/// `parseLegacyWorkerMigrationInputV1(value, path = "$")`: the generations are checked first.
pub fn parse_migration_input(v: &Js, path: &str) -> Read<MigrationInput> {
    exact_record(v, INPUT_KEYS, &[], path)?;
    let at = |key: &str| member(path, key);
    let text = |key: &str| -> Read<String> { Ok(string(field(v, key), &at(key))?.to_string()) };
    let floor = integer(
        field(v, "workerGenerationFloor"),
        &at("workerGenerationFloor"),
        0,
    )?;
    let assigned = integer(
        field(v, "assignedWorkerGeneration"),
        &at("assignedWorkerGeneration"),
        1,
    )?;
    if assigned <= floor {
        return fail(
            &at("assignedWorkerGeneration"),
            "must be greater than the persisted workerGenerationFloor",
        );
    }
    let version = |key: &str, expected| literal_integer(field(v, key), expected, &at(key));
    version("version", WORKER_STATE_MIGRATION_CONTRACT_VERSION)?;
    version("sourceStoreVersion", LEGACY_WORKER_STORE_SCHEMA_VERSION)?;
    version("targetStoreVersion", CANONICAL_WORKER_STORE_SCHEMA_VERSION)?;
    Ok(MigrationInput {
        worker_id: text("workerId")?,
        legacy_run_id: text("legacyRunId")?,
        deprecated_agent_intercom_run_id: nullable_string(
            field(v, "deprecatedAgentIntercomRunId"),
            &at("deprecatedAgentIntercomRunId"),
        )?,
        legacy_state: one_of(
            field(v, "legacyState"),
            LEGACY_WORKER_STATES,
            &at("legacyState"),
        )?,
        legacy_outcome: nullable_string(field(v, "legacyOutcome"), &at("legacyOutcome"))?,
        worker_generation_floor: floor,
        assigned_worker_generation: assigned,
        migrated_at: timestamp(field(v, "migratedAt"), &at("migratedAt"))?.to_string(),
    })
}

/// `migrateLegacyWorkerRecordV1(value)`: the frozen v1 projection. Store readers validate their
/// own complete source record first; this never normalizes an unknown store version.
pub fn migrate_legacy_worker_record(v: &Js) -> Read<MigratedWorkerRecord> {
    Ok(migrate_input(&parse_migration_input(v, "$")?))
}

/// The projection of an input already parsed (the full worker-store migration reads its
/// `worker` at `$.worker` first; parsing it again at `$` could not refuse it).
pub fn migrate_input(input: &MigrationInput) -> MigratedWorkerRecord {
    MigratedWorkerRecord {
        worker_id: input.worker_id.clone(),
        worker_incarnation_id: input.legacy_run_id.clone(),
        worker_generation: input.assigned_worker_generation,
        mapping: Mapping::of_legacy(input.legacy_state, input.legacy_outcome.as_deref()),
        migration_audit: MigrationAudit::of(input),
        stopping_reconciliation: None,
    }
}

fn parse_audit(v: &Js, path: &str) -> Read<MigrationAudit> {
    exact_record(v, AUDIT_KEYS, &[], path)?;
    let at = |key: &str| member(path, key);
    let version = |key: &str, expected| literal_integer(field(v, key), expected, &at(key));
    version("version", WORKER_STATE_MIGRATION_CONTRACT_VERSION)?;
    version("sourceStoreVersion", LEGACY_WORKER_STORE_SCHEMA_VERSION)?;
    version("targetStoreVersion", CANONICAL_WORKER_STORE_SCHEMA_VERSION)?;
    if field(v, "sourceIncarnationField").as_str() != Some(SOURCE_INCARNATION_FIELD) {
        return fail(
            &at("sourceIncarnationField"),
            format!("must be \"{SOURCE_INCARNATION_FIELD}\""),
        );
    }
    Ok(MigrationAudit {
        original_run_id: string(field(v, "originalRunId"), &at("originalRunId"))?.to_string(),
        original_deprecated_agent_intercom_run_id: nullable_string(
            field(v, "originalDeprecatedAgentIntercomRunId"),
            &at("originalDeprecatedAgentIntercomRunId"),
        )?,
        original_state: one_of(
            field(v, "originalState"),
            LEGACY_WORKER_STATES,
            &at("originalState"),
        )?,
        original_outcome: nullable_string(field(v, "originalOutcome"), &at("originalOutcome"))?,
        worker_generation_floor: integer(
            field(v, "workerGenerationFloor"),
            &at("workerGenerationFloor"),
            0,
        )?,
        migrated_at: timestamp(field(v, "migratedAt"), &at("migratedAt"))?.to_string(),
    })
}

/// `parseMigratedWorkerRecordV2(value, path = "$")`: the members (status, state, resume state,
/// audit and evidence first, as the TypeScript core reads them), then the record's semantics.
pub fn parse_migrated_record(v: &Js, path: &str) -> Read<MigratedWorkerRecord> {
    exact_record(v, RECORD_KEYS, &[], path)?;
    let at = |key: &str| member(path, key);
    let nullable = |key: &str| nullable_string(field(v, key), &at(key));
    let flag = |key: &str| boolean(field(v, key), &at(key));
    let migration_status = one_of(
        field(v, "migrationStatus"),
        MIGRATION_STATUSES,
        &at("migrationStatus"),
    )?;
    let state = match field(v, "state") {
        Js::Null => None,
        s => Some(parse_participant_state(s, &at("state"))?),
    };
    let resume_state = match field(v, "resumeState") {
        Js::Null => None,
        s => Some(one_of(s, BLOCKED_RESUME_STATES, &at("resumeState"))?),
    };
    let migration_audit = parse_audit(field(v, "migrationAudit"), &at("migrationAudit"))?;
    let stopping_reconciliation = match field(v, "stoppingReconciliation") {
        Js::Null => None,
        e => Some(parse_stopping_reconciliation(
            e,
            &at("stoppingReconciliation"),
        )?),
    };
    literal_integer(
        field(v, "schemaVersion"),
        CANONICAL_WORKER_STORE_SCHEMA_VERSION,
        &at("schemaVersion"),
    )?;
    let worker_id = string(field(v, "workerId"), &at("workerId"))?.to_string();
    let worker_incarnation_id =
        string(field(v, "workerIncarnationId"), &at("workerIncarnationId"))?.to_string();
    let worker_generation = integer(field(v, "workerGeneration"), &at("workerGeneration"), 1)?;
    let reason = nullable("reason")?;
    let terminal_outcome = nullable("terminalOutcome")?;
    let requires_readiness_reconciliation = flag("requiresReadinessReconciliation")?;
    let legacy_idle_hint = flag("legacyIdleHint")?;
    let read_only = flag("readOnly")?;
    if !matches!(field(v, "dispatchAllowed"), Js::Bool(false)) {
        return fail(
            &at("dispatchAllowed"),
            "must be false during legacy migration",
        );
    }
    let record = MigratedWorkerRecord {
        worker_id,
        worker_incarnation_id,
        worker_generation,
        mapping: Mapping {
            state,
            resume_state,
            reason,
            terminal_outcome,
            requires_readiness_reconciliation,
            legacy_idle_hint,
            migration_status,
            read_only,
        },
        migration_audit,
        stopping_reconciliation,
    };
    check_semantics(&record, path)?;
    Ok(record)
}

/// Whether `a` names an instant before `b` (both canonical timestamps).
fn before(a: &str, b: &str) -> bool {
    parse_timestamp(a) < parse_timestamp(b)
}

fn check_semantics(record: &MigratedWorkerRecord, path: &str) -> Read<()> {
    let at = |key: &str| member(path, key);
    let audit = &record.migration_audit;
    let m = &record.mapping;
    if record.worker_incarnation_id != audit.original_run_id {
        return fail(
            &at("workerIncarnationId"),
            "must preserve legacy runId byte-for-byte",
        );
    }
    if record.worker_generation <= audit.worker_generation_floor {
        return fail(
            &at("workerGeneration"),
            "must be monotonic above the persisted generation floor",
        );
    }
    let stopping = audit.original_state == "stopping";
    if m.migration_status == "pending_stopping_reconciliation" {
        if !stopping {
            return fail(
                &member(&at("migrationAudit"), "originalState"),
                "pending migration requires legacy stopping",
            );
        }
        if *m != Mapping::pending() || record.stopping_reconciliation.is_some() {
            return fail(
                path,
                concat!(
                    "pending legacy stopping must be state-null, detail-free, read-only, ",
                    "and unreconciled"
                ),
            );
        }
        return Ok(());
    }
    if m.state.is_none() || m.read_only {
        return fail(
            path,
            "completed migration requires a canonical state and must not remain read-only",
        );
    }
    if m.state == Some("blocked") {
        if m.resume_state.is_none() {
            return fail(
                &at("resumeState"),
                "blocked requires a persisted resumable state",
            );
        }
    } else if m.resume_state.is_some() {
        return fail(&at("resumeState"), "is only valid while state is blocked");
    }
    let expected = match (&record.stopping_reconciliation, stopping) {
        (None, true) => {
            return fail(
                &at("stoppingReconciliation"),
                "completed legacy stopping requires evidence",
            );
        }
        (Some(_), false) => {
            return fail(
                &at("stoppingReconciliation"),
                "is only valid for legacy stopping",
            );
        }
        (Some(evidence), true) => {
            if evidence.worker_id != record.worker_id
                || evidence.worker_incarnation_id != record.worker_incarnation_id
                || evidence.worker_generation != record.worker_generation
            {
                return fail(
                    &at("stoppingReconciliation"),
                    "must match worker identity and generation",
                );
            }
            if before(&evidence.observed_at, &audit.migrated_at) {
                return fail(
                    &member(&at("stoppingReconciliation"), "observedAt"),
                    "must not precede migration",
                );
            }
            let (state, reason) = evidence.settles();
            Mapping {
                reason,
                ..Mapping::complete(state)
            }
        }
        (None, false) => {
            Mapping::of_legacy(audit.original_state, audit.original_outcome.as_deref())
        }
    };
    let differs = [
        ("state", m.state != expected.state),
        ("resumeState", m.resume_state != expected.resume_state),
        ("reason", m.reason != expected.reason),
        (
            "terminalOutcome",
            m.terminal_outcome != expected.terminal_outcome,
        ),
        (
            "requiresReadinessReconciliation",
            m.requires_readiness_reconciliation != expected.requires_readiness_reconciliation,
        ),
        (
            "legacyIdleHint",
            m.legacy_idle_hint != expected.legacy_idle_hint,
        ),
    ];
    if let Some((key, _)) = differs.iter().find(|(_, d)| *d) {
        return fail(
            &at(key),
            format!("does not match legacy {} mapping", audit.original_state),
        );
    }
    Ok(())
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

pub(super) fn parse_input_op(a: Args<'_>) -> Result<Out, Failure> {
    let path = ops::path(a, 1, "$")?;
    Ok(Out::Json(parse_migration_input(a.get(0), &path)?.to_json()))
}

pub(super) fn input_store_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(store_result(
        a.get(0),
        WORKER_STATE_MIGRATION_CONTRACT_VERSION,
        |v| parse_migration_input(v, "$").map(|i| i.to_json()),
    )))
}

pub(super) fn migrate_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(migrate_legacy_worker_record(a.get(0))?.to_json()))
}

pub(super) fn reconcile_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(
        reconcile_legacy_stopping_worker(a.get(0), a.get(1))?.to_json(),
    ))
}

pub(super) fn parse_record_op(a: Args<'_>) -> Result<Out, Failure> {
    let path = ops::path(a, 1, "$")?;
    Ok(Out::Json(parse_migrated_record(a.get(0), &path)?.to_json()))
}

pub(super) fn can_dispatch_op(a: Args<'_>) -> Result<Out, Failure> {
    // Dispatch needs positive v2 readiness proof: no migrated record is dispatchable.
    parse_migrated_record(a.get(0), "$")?;
    Ok(Out::Json("false".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(state: &str, outcome: &str) -> Js {
        Js::parse_json(&format!(
            r#"{{"version":1,"sourceStoreVersion":1,"targetStoreVersion":2,"workerId":"w",
            "legacyRunId":"run/é","deprecatedAgentIntercomRunId":null,"legacyState":"{state}",
            "legacyOutcome":{outcome},"workerGenerationFloor":2,"assignedWorkerGeneration":3,
            "migratedAt":"2026-07-28T12:00:00.000Z"}}"#
        ))
        .unwrap()
    }

    fn edited(record: &MigratedWorkerRecord, key: &str, value: &str) -> Js {
        let Js::Object(mut o) = Js::parse_json(&record.to_json()).unwrap() else {
            unreachable!()
        };
        for (k, v) in &mut o.members {
            if k.text == key {
                *v = Js::parse_json(value).unwrap();
            }
        }
        Js::Object(o)
    }

    #[test]
    fn every_legacy_state_maps_and_reads_back() {
        for state in LEGACY_WORKER_STATES {
            let record = migrate_legacy_worker_record(&input(state, "null")).unwrap();
            let again = parse_migrated_record(&Js::parse_json(&record.to_json()).unwrap(), "$");
            assert_eq!(again.unwrap(), record, "{state}");
        }
        let failed = migrate_legacy_worker_record(&input("failed", "\"crash\"")).unwrap();
        assert_eq!(failed.mapping.reason.as_deref(), Some("crash"));
        let lost = migrate_legacy_worker_record(&input("lost", "null")).unwrap();
        assert_eq!(lost.mapping.reason.as_deref(), Some("legacy_lost"));
    }

    #[test]
    fn each_legacy_state_maps_as_the_contract_fixes_it() {
        let expected = [
            ("provisioning", "null", Some("provisioning"), None),
            ("running", "null", Some("registering"), None),
            ("idle", "null", Some("registering"), None),
            (
                "needs_attention",
                "null",
                Some("blocked"),
                Some("legacy_needs_attention"),
            ),
            ("completed", "\"done\"", Some("stopped"), None),
            ("failed", "null", Some("failed"), Some("legacy_failed")),
            ("failed", "\"crash\"", Some("failed"), Some("crash")),
            ("stopped", "null", Some("stopped"), None),
            ("lost", "null", Some("lost"), Some("legacy_lost")),
            ("stopping", "null", None, None),
        ];
        for (state, outcome, canonical, reason) in expected {
            let parsed = parse_migration_input(&input(state, outcome), "$").unwrap();
            let record = migrate_input(&parsed);
            assert_eq!(record.mapping.state, canonical, "{state}");
            assert_eq!(record.mapping.reason.as_deref(), reason, "{state}");
            let pending = record.mapping.migration_status == "pending_stopping_reconciliation";
            assert_eq!(pending, state == "stopping", "{state}");
            let whole = migrate_legacy_worker_record(&input(state, outcome)).unwrap();
            assert_eq!(whole, record, "{state}");
        }
    }

    #[test]
    fn inputs_check_generations_first() {
        let message = |v: &Js| parse_migration_input(v, "$").unwrap_err().to_string();
        let mut bad = input("idle", "null");
        if let Js::Object(o) = &mut bad {
            o.members[0].1 = Js::Num(2.0);
            o.members[9].1 = Js::Num(2.0);
        }
        assert_eq!(
            message(&bad),
            "$.assignedWorkerGeneration: must be greater than the persisted workerGenerationFloor"
        );
    }

    #[test]
    fn records_refuse_corrupt_mappings() {
        let idle = migrate_legacy_worker_record(&input("idle", "null")).unwrap();
        let message = |v: &Js| parse_migrated_record(v, "$").unwrap_err().to_string();
        assert_eq!(
            message(&edited(&idle, "legacyIdleHint", "false")),
            "$.legacyIdleHint: does not match legacy idle mapping"
        );
        assert_eq!(
            message(&edited(&idle, "dispatchAllowed", "true")),
            "$.dispatchAllowed: must be false during legacy migration"
        );
        assert_eq!(
            message(&edited(&idle, "workerIncarnationId", "\"x\"")),
            "$.workerIncarnationId: must preserve legacy runId byte-for-byte"
        );
        let pending = migrate_legacy_worker_record(&input("stopping", "null")).unwrap();
        assert_eq!(
            message(&edited(&pending, "readOnly", "false")),
            concat!(
                "$: pending legacy stopping must be state-null, detail-free, read-only, ",
                "and unreconciled"
            )
        );
        assert_eq!(
            message(&edited(&pending, "migrationStatus", "\"complete\"")),
            "$: completed migration requires a canonical state and must not remain read-only"
        );
    }

    #[test]
    fn stopping_settles_with_matching_evidence() {
        let pending = migrate_legacy_worker_record(&input("stopping", "null")).unwrap();
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
