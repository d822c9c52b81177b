//! The worker record inside a worker-store migration: the legacy worker input
//! (`parseLegacyWorkerMigrationInputV1`), its projection onto the canonical participant states
//! (`migrateLegacyWorkerRecordV1`) and the migrated record's reader
//! (`parseMigratedWorkerRecordV2`, with the legacy stopping evidence it may carry).
//!
//! The TypeScript core defines these in its participant-state module; the full worker-store
//! migration is built on them, so this module holds the rules it needs, crate-private. They are
//! not operations of their own here (`boss.parseLegacyWorkerMigrationInputV1` and the others
//! belong to the participant-state module).

use super::JsonObject;
use crate::boss::participant::parse_participant_state;
use crate::contract::read::{
    Read, boolean, exact_record, fail, field, integer, member, one_of, parse_timestamp, string,
    timestamp,
};
use crate::contract::{Failure, Js};

/// `WORKER_STATE_MIGRATION_CONTRACT_VERSION`.
const CONTRACT_VERSION: i64 = 1;
/// `LEGACY_WORKER_STORE_SCHEMA_VERSION`.
const LEGACY_STORE_VERSION: i64 = 1;
/// `CANONICAL_WORKER_STORE_SCHEMA_VERSION`.
const CANONICAL_STORE_VERSION: i64 = 2;

/// `LEGACY_WORKER_STATES`, in the TypeScript core's order.
pub const LEGACY_WORKER_STATES: &[&str] = &[
    "provisioning",
    "running",
    "idle",
    "needs_attention",
    "completed",
    "failed",
    "stopped",
    "lost",
    "stopping",
];
/// `BLOCKED_RESUME_STATES`.
const BLOCKED_RESUME_STATES: &[&str] = &["registering", "ready", "working", "waiting", "paused"];
const MIGRATION_STATUSES: &[&str] = &["complete", "pending_stopping_reconciliation"];
const STOPPING_EVIDENCE_SOURCES: &[&str] = &["systemd", "cgroup", "systemd_and_cgroup"];
const STOPPING_OUTCOMES: &[&str] = &["stopped", "failed", "lost", "unresolved_after_settle"];

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
const EVIDENCE_KEYS: &[&str] = &[
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
const MIGRATED_KEYS: &[&str] = &[
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

/// A legacy WorkerStore worker about to be migrated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LegacyWorkerInput {
    /// `workerId`.
    pub worker_id: String,
    /// `legacyRunId`: the legacy `runId`, an incarnation id (never Boss authority).
    pub legacy_run_id: String,
    /// `deprecatedAgentIntercomRunId`, kept for the audit only.
    pub deprecated_run_id: Option<String>,
    /// `legacyState`, one of [`LEGACY_WORKER_STATES`].
    pub legacy_state: &'static str,
    /// `legacyOutcome`.
    pub legacy_outcome: Option<String>,
    /// `workerGenerationFloor`: the highest generation already persisted (0 for none).
    pub generation_floor: i64,
    /// `assignedWorkerGeneration`, above the floor.
    pub assigned_generation: i64,
    /// `migratedAt`.
    pub migrated_at: String,
}

/// `value === null ? null : readString(value, path)`.
fn nullable_string(value: &Js, path: &str) -> Read<Option<String>> {
    match value {
        Js::Null => Ok(None),
        v => string(v, path).map(|s| Some(s.to_string())),
    }
}

/// `readInteger(value, path, 0)` that must then be `expected`.
fn literal_integer(value: &Js, expected: i64, path: &str) -> Read<i64> {
    let found = integer(value, path, 0)?;
    if found != expected {
        return fail(
            path,
            format!("unsupported version {found}; expected {expected}"),
        );
    }
    Ok(found)
}

/// `parseLegacyWorkerMigrationInputV1(value, path)`.
pub fn parse_legacy_input(v: &Js, path: &str) -> Read<LegacyWorkerInput> {
    exact_record(v, INPUT_KEYS, &[], path)?;
    let at = |key: &str| member(path, key);
    let generation_floor = integer(
        field(v, "workerGenerationFloor"),
        &at("workerGenerationFloor"),
        0,
    )?;
    let assigned = at("assignedWorkerGeneration");
    let assigned_generation = integer(field(v, "assignedWorkerGeneration"), &assigned, 1)?;
    if assigned_generation <= generation_floor {
        return fail(
            &assigned,
            "must be greater than the persisted workerGenerationFloor",
        );
    }
    literal_integer(field(v, "version"), CONTRACT_VERSION, &at("version"))?;
    literal_integer(
        field(v, "sourceStoreVersion"),
        LEGACY_STORE_VERSION,
        &at("sourceStoreVersion"),
    )?;
    literal_integer(
        field(v, "targetStoreVersion"),
        CANONICAL_STORE_VERSION,
        &at("targetStoreVersion"),
    )?;
    Ok(LegacyWorkerInput {
        worker_id: string(field(v, "workerId"), &at("workerId"))?.to_string(),
        legacy_run_id: string(field(v, "legacyRunId"), &at("legacyRunId"))?.to_string(),
        deprecated_run_id: nullable_string(
            field(v, "deprecatedAgentIntercomRunId"),
            &at("deprecatedAgentIntercomRunId"),
        )?,
        legacy_state: one_of(
            field(v, "legacyState"),
            LEGACY_WORKER_STATES,
            &at("legacyState"),
        )?,
        legacy_outcome: nullable_string(field(v, "legacyOutcome"), &at("legacyOutcome"))?,
        generation_floor,
        assigned_generation,
        migrated_at: timestamp(field(v, "migratedAt"), &at("migratedAt"))?.to_string(),
    })
}

impl LegacyWorkerInput {
    /// The record as `parseLegacyWorkerMigrationInputV1` returns it.
    pub fn to_json(&self) -> String {
        JsonObject::new()
            .int("version", CONTRACT_VERSION)
            .int("sourceStoreVersion", LEGACY_STORE_VERSION)
            .int("targetStoreVersion", CANONICAL_STORE_VERSION)
            .str("workerId", &self.worker_id)
            .str("legacyRunId", &self.legacy_run_id)
            .nullable_str(
                "deprecatedAgentIntercomRunId",
                self.deprecated_run_id.as_deref(),
            )
            .str("legacyState", self.legacy_state)
            .nullable_str("legacyOutcome", self.legacy_outcome.as_deref())
            .int("workerGenerationFloor", self.generation_floor)
            .int("assignedWorkerGeneration", self.assigned_generation)
            .str("migratedAt", &self.migrated_at)
            .finish()
    }
}

/// `WorkerStateMigrationAuditV1`: what the migration came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigrationAudit {
    /// `originalRunId`.
    pub original_run_id: String,
    /// `originalDeprecatedAgentIntercomRunId`.
    pub original_deprecated_run_id: Option<String>,
    /// `originalState`.
    pub original_state: &'static str,
    /// `originalOutcome`.
    pub original_outcome: Option<String>,
    /// `workerGenerationFloor`.
    pub generation_floor: i64,
    /// `migratedAt`.
    pub migrated_at: String,
}

/// `LegacyStoppingReconciliationV1`: the direct process evidence that settles a legacy
/// `stopping` worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoppingEvidence {
    /// `workerId`.
    pub worker_id: String,
    /// `workerIncarnationId`.
    pub incarnation: String,
    /// `workerGeneration`.
    pub generation: i64,
    /// `observationId`.
    pub observation_id: String,
    /// `evidenceSource`.
    pub source: &'static str,
    /// `outcome`.
    pub outcome: &'static str,
    /// `boundedSettleWindowExpired`.
    pub settle_window_expired: bool,
    /// `observedAt`.
    pub observed_at: String,
}

/// The state-dependent part of a migrated record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateMapping {
    /// `state` (`None` while a legacy `stopping` worker awaits its evidence).
    pub state: Option<&'static str>,
    /// `resumeState`, set exactly while `blocked`.
    pub resume_state: Option<&'static str>,
    /// `reason`.
    pub reason: Option<String>,
    /// `terminalOutcome`.
    pub terminal_outcome: Option<String>,
    /// `requiresReadinessReconciliation`.
    pub requires_readiness_reconciliation: bool,
    /// `legacyIdleHint`.
    pub legacy_idle_hint: bool,
    /// `migrationStatus === "pending_stopping_reconciliation"`.
    pub pending: bool,
    /// `readOnly`.
    pub read_only: bool,
}

impl StateMapping {
    fn complete(state: &'static str) -> StateMapping {
        StateMapping {
            state: Some(state),
            resume_state: None,
            reason: None,
            terminal_outcome: None,
            requires_readiness_reconciliation: false,
            legacy_idle_hint: false,
            pending: false,
            read_only: false,
        }
    }

    fn with_reason(mut self, reason: &str) -> StateMapping {
        self.reason = Some(reason.to_string());
        self
    }
}

/// The frozen v1 projection of a legacy state (for `stopping`: the fenced pending record).
fn legacy_mapping(state: &str, outcome: Option<&str>) -> StateMapping {
    let registering = || StateMapping {
        requires_readiness_reconciliation: true,
        ..StateMapping::complete("registering")
    };
    match state {
        "running" => registering(),
        "idle" => StateMapping {
            legacy_idle_hint: true,
            ..registering()
        },
        "needs_attention" => StateMapping {
            resume_state: Some("registering"),
            ..StateMapping::complete("blocked")
        }
        .with_reason("legacy_needs_attention"),
        "completed" => StateMapping {
            terminal_outcome: Some("completed".to_string()),
            ..StateMapping::complete("stopped")
        },
        "failed" => {
            StateMapping::complete("failed").with_reason(outcome.unwrap_or("legacy_failed"))
        }
        "stopped" => StateMapping::complete("stopped"),
        "lost" => StateMapping::complete("lost").with_reason(outcome.unwrap_or("legacy_lost")),
        "stopping" => StateMapping {
            state: None,
            resume_state: None,
            reason: None,
            terminal_outcome: None,
            requires_readiness_reconciliation: false,
            legacy_idle_hint: false,
            pending: true,
            read_only: true,
        },
        // "provisioning" (a parsed legacy state is one of LEGACY_WORKER_STATES).
        _ => StateMapping::complete("provisioning"),
    }
}

/// `MigratedWorkerRecordV2`: a worker after the migration (never with a `bossRunId`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigratedWorker {
    /// `workerId`.
    pub worker_id: String,
    /// `workerIncarnationId`: the legacy `runId`, byte for byte.
    pub incarnation: String,
    /// `workerGeneration`.
    pub generation: i64,
    /// State, resume state, reason, outcome, hints, status and read-only flag.
    pub mapping: StateMapping,
    /// `migrationAudit`.
    pub audit: MigrationAudit,
    /// `stoppingReconciliation`.
    pub stopping: Option<StoppingEvidence>,
}

/// `migrateLegacyWorkerRecordV1` of an already parsed input.
pub fn migrate_legacy_worker(input: &LegacyWorkerInput) -> MigratedWorker {
    MigratedWorker {
        worker_id: input.worker_id.clone(),
        incarnation: input.legacy_run_id.clone(),
        generation: input.assigned_generation,
        mapping: legacy_mapping(input.legacy_state, input.legacy_outcome.as_deref()),
        audit: MigrationAudit {
            original_run_id: input.legacy_run_id.clone(),
            original_deprecated_run_id: input.deprecated_run_id.clone(),
            original_state: input.legacy_state,
            original_outcome: input.legacy_outcome.clone(),
            generation_floor: input.generation_floor,
            migrated_at: input.migrated_at.clone(),
        },
        stopping: None,
    }
}

fn parse_audit(v: &Js, path: &str) -> Read<MigrationAudit> {
    exact_record(v, AUDIT_KEYS, &[], path)?;
    let at = |key: &str| member(path, key);
    literal_integer(field(v, "version"), CONTRACT_VERSION, &at("version"))?;
    literal_integer(
        field(v, "sourceStoreVersion"),
        LEGACY_STORE_VERSION,
        &at("sourceStoreVersion"),
    )?;
    literal_integer(
        field(v, "targetStoreVersion"),
        CANONICAL_STORE_VERSION,
        &at("targetStoreVersion"),
    )?;
    if field(v, "sourceIncarnationField").as_str() != Some("runId") {
        return fail(&at("sourceIncarnationField"), "must be \"runId\"");
    }
    Ok(MigrationAudit {
        original_run_id: string(field(v, "originalRunId"), &at("originalRunId"))?.to_string(),
        original_deprecated_run_id: nullable_string(
            field(v, "originalDeprecatedAgentIntercomRunId"),
            &at("originalDeprecatedAgentIntercomRunId"),
        )?,
        original_state: one_of(
            field(v, "originalState"),
            LEGACY_WORKER_STATES,
            &at("originalState"),
        )?,
        original_outcome: nullable_string(field(v, "originalOutcome"), &at("originalOutcome"))?,
        generation_floor: integer(
            field(v, "workerGenerationFloor"),
            &at("workerGenerationFloor"),
            0,
        )?,
        migrated_at: timestamp(field(v, "migratedAt"), &at("migratedAt"))?.to_string(),
    })
}

/// `parseLegacyStoppingReconciliationV1(value, path)`.
fn parse_stopping_evidence(v: &Js, path: &str) -> Read<StoppingEvidence> {
    exact_record(v, EVIDENCE_KEYS, &[], path)?;
    let at = |key: &str| member(path, key);
    literal_integer(field(v, "version"), CONTRACT_VERSION, &at("version"))?;
    let evidence = StoppingEvidence {
        worker_id: string(field(v, "workerId"), &at("workerId"))?.to_string(),
        incarnation: string(field(v, "workerIncarnationId"), &at("workerIncarnationId"))?
            .to_string(),
        generation: integer(field(v, "workerGeneration"), &at("workerGeneration"), 1)?,
        observation_id: string(field(v, "observationId"), &at("observationId"))?.to_string(),
        source: one_of(
            field(v, "evidenceSource"),
            STOPPING_EVIDENCE_SOURCES,
            &at("evidenceSource"),
        )?,
        outcome: one_of(field(v, "outcome"), STOPPING_OUTCOMES, &at("outcome"))?,
        settle_window_expired: boolean(
            field(v, "boundedSettleWindowExpired"),
            &at("boundedSettleWindowExpired"),
        )?,
        observed_at: timestamp(field(v, "observedAt"), &at("observedAt"))?.to_string(),
    };
    let unresolved = evidence.outcome == "unresolved_after_settle";
    if unresolved && !evidence.settle_window_expired {
        return fail(
            &at("boundedSettleWindowExpired"),
            "must be true for unresolved_after_settle",
        );
    }
    if !unresolved && evidence.settle_window_expired {
        return fail(
            &at("boundedSettleWindowExpired"),
            "must be false when direct evidence establishes a terminal outcome",
        );
    }
    Ok(evidence)
}

/// `value === null ? null : read(value)`.
fn nullable<T>(value: &Js, read: impl FnOnce(&Js) -> Read<T>) -> Read<Option<T>> {
    match value {
        Js::Null => Ok(None),
        v => read(v).map(Some),
    }
}

/// `parseMigratedWorkerRecordV2(value, path)`.
pub fn parse_migrated_worker(v: &Js, path: &str) -> Read<MigratedWorker> {
    exact_record(v, MIGRATED_KEYS, &[], path)?;
    let at = |key: &str| member(path, key);
    let status = one_of(
        field(v, "migrationStatus"),
        MIGRATION_STATUSES,
        &at("migrationStatus"),
    )?;
    let state = nullable(field(v, "state"), |s| {
        parse_participant_state(s, &at("state"))
    })?;
    let resume_state = nullable(field(v, "resumeState"), |s| {
        one_of(s, BLOCKED_RESUME_STATES, &at("resumeState"))
    })?;
    let audit = parse_audit(field(v, "migrationAudit"), &at("migrationAudit"))?;
    let stopping = nullable(field(v, "stoppingReconciliation"), |s| {
        parse_stopping_evidence(s, &at("stoppingReconciliation"))
    })?;
    literal_integer(
        field(v, "schemaVersion"),
        CANONICAL_STORE_VERSION,
        &at("schemaVersion"),
    )?;
    let worker_id = string(field(v, "workerId"), &at("workerId"))?.to_string();
    let incarnation = string(field(v, "workerIncarnationId"), &at("workerIncarnationId"))?;
    let generation = integer(field(v, "workerGeneration"), &at("workerGeneration"), 1)?;
    let reason = nullable_string(field(v, "reason"), &at("reason"))?;
    let terminal_outcome = nullable_string(field(v, "terminalOutcome"), &at("terminalOutcome"))?;
    let requires_readiness_reconciliation = boolean(
        field(v, "requiresReadinessReconciliation"),
        &at("requiresReadinessReconciliation"),
    )?;
    let legacy_idle_hint = boolean(field(v, "legacyIdleHint"), &at("legacyIdleHint"))?;
    let read_only = boolean(field(v, "readOnly"), &at("readOnly"))?;
    if field(v, "dispatchAllowed") != &Js::Bool(false) {
        return fail(
            &at("dispatchAllowed"),
            "must be false during legacy migration",
        );
    }
    let worker = MigratedWorker {
        worker_id,
        incarnation: incarnation.to_string(),
        generation,
        mapping: StateMapping {
            state,
            resume_state,
            reason,
            terminal_outcome,
            requires_readiness_reconciliation,
            legacy_idle_hint,
            pending: status == "pending_stopping_reconciliation",
            read_only,
        },
        audit,
        stopping,
    };
    check_semantics(&worker, path)?;
    Ok(worker)
}

/// The invariants of a migrated record beyond its fields' shapes, in the TypeScript order.
fn check_semantics(w: &MigratedWorker, path: &str) -> Read<()> {
    let at = |key: &str| member(path, key);
    let m = &w.mapping;
    if w.incarnation != w.audit.original_run_id {
        return fail(
            &at("workerIncarnationId"),
            "must preserve legacy runId byte-for-byte",
        );
    }
    if w.generation <= w.audit.generation_floor {
        return fail(
            &at("workerGeneration"),
            "must be monotonic above the persisted generation floor",
        );
    }
    let stopping = w.audit.original_state == "stopping";
    if m.pending {
        if !stopping {
            return fail(
                &member(&at("migrationAudit"), "originalState"),
                "pending migration requires legacy stopping",
            );
        }
        let detail_free = m.state.is_none()
            && m.resume_state.is_none()
            && m.reason.is_none()
            && m.terminal_outcome.is_none()
            && !m.requires_readiness_reconciliation
            && !m.legacy_idle_hint
            && m.read_only
            && w.stopping.is_none();
        if !detail_free {
            return fail(
                path,
                "pending legacy stopping must be state-null, detail-free, read-only, and \
                 unreconciled",
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
    match (&w.stopping, stopping) {
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
        _ => {}
    }
    if let Some(e) = &w.stopping {
        if e.worker_id != w.worker_id
            || e.incarnation != w.incarnation
            || e.generation != w.generation
        {
            return fail(
                &at("stoppingReconciliation"),
                "must match worker identity and generation",
            );
        }
        if parse_timestamp(&e.observed_at) < parse_timestamp(&w.audit.migrated_at) {
            return fail(
                &member(&at("stoppingReconciliation"), "observedAt"),
                "must not precede migration",
            );
        }
    }
    let expected = match &w.stopping {
        Some(e) if e.outcome == "unresolved_after_settle" => {
            StateMapping::complete("unreachable").with_reason("legacy_stopping_unresolved")
        }
        Some(e) => StateMapping::complete(e.outcome),
        None => legacy_mapping(w.audit.original_state, w.audit.original_outcome.as_deref()),
    };
    let mismatch = [
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
    if let Some((key, _)) = mismatch.iter().find(|(_, differs)| *differs) {
        return Err(Failure::contract(
            &at(key),
            format!("does not match legacy {} mapping", w.audit.original_state),
        ));
    }
    Ok(())
}

impl MigratedWorker {
    /// The record as `migrateLegacyWorkerRecordV1` and `parseMigratedWorkerRecordV2` return it.
    pub fn to_json(&self) -> String {
        let m = &self.mapping;
        let a = &self.audit;
        let audit = JsonObject::new()
            .int("version", CONTRACT_VERSION)
            .int("sourceStoreVersion", LEGACY_STORE_VERSION)
            .int("targetStoreVersion", CANONICAL_STORE_VERSION)
            .str("sourceIncarnationField", "runId")
            .str("originalRunId", &a.original_run_id)
            .nullable_str(
                "originalDeprecatedAgentIntercomRunId",
                a.original_deprecated_run_id.as_deref(),
            )
            .str("originalState", a.original_state)
            .nullable_str("originalOutcome", a.original_outcome.as_deref())
            .int("workerGenerationFloor", a.generation_floor)
            .str("migratedAt", &a.migrated_at)
            .finish();
        let stopping = match &self.stopping {
            None => "null".to_string(),
            Some(e) => JsonObject::new()
                .int("version", CONTRACT_VERSION)
                .str("workerId", &e.worker_id)
                .str("workerIncarnationId", &e.incarnation)
                .int("workerGeneration", e.generation)
                .str("observationId", &e.observation_id)
                .str("evidenceSource", e.source)
                .str("outcome", e.outcome)
                .bool("boundedSettleWindowExpired", e.settle_window_expired)
                .str("observedAt", &e.observed_at)
                .finish(),
        };
        let status = if m.pending {
            "pending_stopping_reconciliation"
        } else {
            "complete"
        };
        JsonObject::new()
            .int("schemaVersion", CANONICAL_STORE_VERSION)
            .str("workerId", &self.worker_id)
            .str("workerIncarnationId", &self.incarnation)
            .int("workerGeneration", self.generation)
            .nullable_str("state", m.state)
            .nullable_str("resumeState", m.resume_state)
            .nullable_str("reason", m.reason.as_deref())
            .nullable_str("terminalOutcome", m.terminal_outcome.as_deref())
            .bool(
                "requiresReadinessReconciliation",
                m.requires_readiness_reconciliation,
            )
            .bool("legacyIdleHint", m.legacy_idle_hint)
            .str("migrationStatus", status)
            .bool("readOnly", m.read_only)
            .bool("dispatchAllowed", false)
            .raw("migrationAudit", &audit)
            .raw("stoppingReconciliation", &stopping)
            .finish()
    }
}
