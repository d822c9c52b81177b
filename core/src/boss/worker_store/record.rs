//! The full migration: its input (`parseFullWorkerStoreMigrationInputV1`), the
//! `orc.worker-store-record.v2` record it makes (`migrateFullWorkerStoreV1`) and that record's
//! reader (`parseWorkerStoreRecordV2`).
//!
//! A v2 record binds every compatibility group but the environment to the migrated worker's
//! incarnation and generation. Its reader takes those identities off and reads the groups
//! again as a migration input would (from a fresh object, so paths inside the groups read
//! `$compatibility.<group>...`, as in the TypeScript core), then rebuilds the record.

use super::fields::{CompatibilityFields, parse_compatibility_fields};
use super::{FULL_WORKER_STORE_MIGRATION_VERSION, FULL_WORKER_STORE_V2_RECORD_VERSION, JsonObject};
use crate::boss::participant::migration::{
    MigratedWorkerRecord, MigrationInput, migrate_input, parse_migrated_record,
    parse_migration_input,
};
use crate::boss::string_array_json;
use crate::contract::Js;
use crate::contract::read::{
    Read, exact_record, fail, field, integer, member, optional_string, read_at, string,
    string_array,
};

const INPUT_KEYS: &[&str] = &[
    "version",
    "worker",
    "environment",
    "health",
    "runtime",
    "adapter",
    "systemd",
    "notice",
    "controller",
];
const RECORD_KEYS: &[&str] = &[
    "version",
    "worker",
    "environment",
    "health",
    "runtime",
    "adapter",
    "systemd",
    "notice",
    "controller",
    "compatibilityAudit",
];
const ENVIRONMENT_KEYS: &[&str] = &[
    "AGENT_INTERCOM_WORKER_ID",
    "AGENT_INTERCOM_WORKER_INCARNATION_ID",
    "AGENT_INTERCOM_WORKER_GENERATION",
    "AGENT_INTERCOM_RUN_ID",
];
const AUDIT_KEYS: &[&str] = &[
    "sourceEnvironmentIncarnationField",
    "targetEnvironmentIncarnationField",
    "deprecatedEnvironmentAliasLastSupportedVersion",
    "bossRunIdDerived",
    "preservedFieldGroups",
];
/// The compatibility groups a v2 record preserves, in their order.
pub const PRESERVED_FIELD_GROUPS: &[&str] = &[
    "environment",
    "health",
    "runtime",
    "adapter",
    "systemd",
    "notice",
    "controller",
];

/// `FullWorkerStoreMigrationInputV1`: a legacy worker and its compatibility fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FullWorkerStoreMigrationInput {
    /// `worker`.
    pub worker: MigrationInput,
    /// The seven groups.
    pub fields: CompatibilityFields,
}

/// `WorkerStoreRecordV2`: the migrated worker and the groups bound to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerStoreRecord {
    /// `worker`.
    pub worker: MigratedWorkerRecord,
    /// The groups (the environment's incarnation is the worker's).
    pub fields: CompatibilityFields,
}

/// Whether `value` is exactly the string `text` (`value === text`).
fn is_text(value: &Js, text: &str) -> bool {
    matches!(value, Js::Str(s) if s.lone.is_none() && s.text == text)
}

/// `parseFullWorkerStoreMigrationInputV1(value)`.
pub fn parse_full_worker_store_migration_input(v: &Js) -> Read<FullWorkerStoreMigrationInput> {
    exact_record(v, INPUT_KEYS, &[], "$")?;
    let version = field(v, "version");
    if !matches!(version, Js::Num(n) if *n == FULL_WORKER_STORE_MIGRATION_VERSION as f64) {
        return fail(
            "$.version",
            format!("unsupported version: {}", version.js_string()),
        );
    }
    let worker = parse_migration_input(field(v, "worker"), "$.worker")?;
    let fields = parse_compatibility_fields(v, "$")?;
    if fields.environment.worker_id != worker.worker_id {
        return fail(
            "$.environment.AGENT_INTERCOM_WORKER_ID",
            "must match workerId",
        );
    }
    if fields.environment.run_id != worker.legacy_run_id {
        return fail(
            "$.environment.AGENT_INTERCOM_RUN_ID",
            "must match the legacy incarnation byte-for-byte",
        );
    }
    if fields.health.observed_legacy_state != worker.legacy_state {
        return fail(
            "$.health.observedLegacyState",
            "must match the legacy worker state",
        );
    }
    Ok(FullWorkerStoreMigrationInput { worker, fields })
}

/// `migrateFullWorkerStoreV1(value)`.
pub fn migrate_full_worker_store(v: &Js) -> Read<WorkerStoreRecord> {
    let input = parse_full_worker_store_migration_input(v)?;
    Ok(WorkerStoreRecord {
        worker: migrate_input(&input.worker),
        fields: input.fields,
    })
}

/// A surface of a v2 record without its worker identity (which must be the worker's): the
/// members of `required` and `optional` that are not `undefined`, as a fresh object.
fn unbind(
    v: &Js,
    key: &str,
    required: &[&str],
    optional: &[&str],
    worker: &MigratedWorkerRecord,
) -> Read<Js> {
    let path = member("$", key);
    let surface = field(v, key);
    let mut keys = required.to_vec();
    keys.extend(["workerIncarnationId", "workerGeneration"]);
    exact_record(surface, &keys, optional, &path)?;
    let incarnation = read_at(surface, &path, "workerIncarnationId", string)?;
    let generation = read_at(surface, &path, "workerGeneration", |x, p| integer(x, p, 1))?;
    if incarnation != worker.worker_incarnation_id || generation != worker.worker_generation {
        return fail(
            &path,
            "must bind the migrated worker incarnation and generation",
        );
    }
    let kept = required
        .iter()
        .chain(optional)
        .filter(|k| !matches!(field(surface, k), Js::Undefined))
        .map(|k| (*k, field(surface, k).clone()))
        .collect();
    Ok(Js::object(kept))
}

/// `parseWorkerStoreRecordV2(value)`.
pub fn parse_worker_store_record(v: &Js) -> Read<WorkerStoreRecord> {
    exact_record(v, RECORD_KEYS, &[], "$")?;
    let version = field(v, "version");
    if !is_text(version, FULL_WORKER_STORE_V2_RECORD_VERSION) {
        return fail(
            "$.version",
            format!("unsupported version: {}", version.js_string()),
        );
    }
    let worker = parse_migrated_record(field(v, "worker"), "$.worker")?;

    let env = field(v, "environment");
    exact_record(env, ENVIRONMENT_KEYS, &["workspacePath"], "$.environment")?;
    let read = |key: &str| read_at(env, "$.environment", key, string);
    let env_worker = read("AGENT_INTERCOM_WORKER_ID")?;
    let env_incarnation = read("AGENT_INTERCOM_WORKER_INCARNATION_ID")?;
    let env_generation = read("AGENT_INTERCOM_WORKER_GENERATION")?;
    let alias = read("AGENT_INTERCOM_RUN_ID")?;
    let workspace = optional_string(field(env, "workspacePath"), "$.environment.workspacePath")?;
    if env_worker != worker.worker_id
        || env_incarnation != worker.worker_incarnation_id
        || env_generation != worker.worker_generation.to_string()
    {
        return fail(
            "$.environment",
            "must match the migrated worker identity without Boss metadata",
        );
    }
    if alias != worker.worker_incarnation_id {
        return fail(
            "$.environment.AGENT_INTERCOM_RUN_ID",
            "must remain a byte-for-byte alias of workerIncarnationId during the v2 rollout",
        );
    }

    let health = unbind(
        v,
        "health",
        &["originalLegacyState", "canonicalState"],
        &["lastConfirmedAt", "failureCode"],
        &worker,
    )?;
    let canonical = field(&health, "canonicalState");
    let projected = match worker.mapping.state {
        None => matches!(canonical, Js::Null),
        Some(state) => is_text(canonical, state),
    };
    if !is_text(
        field(&health, "originalLegacyState"),
        worker.migration_audit.original_state,
    ) || !projected
    {
        return fail(
            "$.health",
            "must retain the original state and project the canonical state",
        );
    }
    let runtime = unbind(
        v,
        "runtime",
        &["runtimeId"],
        &["processId", "leaseExpiresAt", "maxRuntimeAt"],
        &worker,
    )?;
    let adapter = unbind(
        v,
        "adapter",
        &["adapterId", "adapterVersion", "readinessReported"],
        &["sessionId"],
        &worker,
    )?;
    let systemd = unbind(
        v,
        "systemd",
        &["unitName", "activeState", "subState", "observedAt"],
        &[],
        &worker,
    )?;
    let notice = unbind(
        v,
        "notice",
        &["pendingNoticeIds", "owningManagerRecipient"],
        &["lastDeliveredNoticeId"],
        &worker,
    )?;
    let controller = unbind(v, "controller", &["revision"], &["projectionId"], &worker)?;

    let mut environment = vec![
        ("AGENT_INTERCOM_WORKER_ID", Js::str(&worker.worker_id)),
        (
            "AGENT_INTERCOM_RUN_ID",
            Js::str(&worker.worker_incarnation_id),
        ),
    ];
    if let Some(path) = workspace {
        environment.push(("workspacePath", Js::str(path)));
    }
    let mut health_source = vec![(
        "observedLegacyState",
        field(&health, "originalLegacyState").clone(),
    )];
    for key in ["lastConfirmedAt", "failureCode"] {
        if let Some(value) = health.get(key) {
            health_source.push((key, value.clone()));
        }
    }
    let source = Js::object(vec![
        ("environment", Js::object(environment)),
        ("health", Js::object(health_source)),
        ("runtime", runtime),
        ("adapter", adapter),
        ("systemd", systemd),
        ("notice", notice),
        ("controller", controller),
    ]);
    let fields = parse_compatibility_fields(&source, "$compatibility")?;

    let audit = field(v, "compatibilityAudit");
    exact_record(audit, AUDIT_KEYS, &[], "$.compatibilityAudit")?;
    let literal = |key: &str, text: &str| is_text(field(audit, key), text);
    if !literal("sourceEnvironmentIncarnationField", "AGENT_INTERCOM_RUN_ID")
        || !literal(
            "targetEnvironmentIncarnationField",
            "AGENT_INTERCOM_WORKER_INCARNATION_ID",
        )
        || !literal(
            "deprecatedEnvironmentAliasLastSupportedVersion",
            FULL_WORKER_STORE_V2_RECORD_VERSION,
        )
        || field(audit, "bossRunIdDerived") != &Js::Bool(false)
    {
        return fail(
            "$.compatibilityAudit",
            "must forbid deriving Boss authority from legacy identity",
        );
    }
    let groups_at = "$.compatibilityAudit.preservedFieldGroups";
    let groups = string_array(field(audit, "preservedFieldGroups"), groups_at)?;
    // Compared joined, as the TypeScript core compares them.
    if groups.join(",") != PRESERVED_FIELD_GROUPS.join(",") {
        return fail(
            groups_at,
            "must enumerate every preserved compatibility field group",
        );
    }
    Ok(WorkerStoreRecord { worker, fields })
}

impl FullWorkerStoreMigrationInput {
    /// The input as `parseFullWorkerStoreMigrationInputV1` returns it.
    pub fn to_json(&self) -> String {
        let f = &self.fields;
        let e = &f.environment;
        let environment = JsonObject::new()
            .str("AGENT_INTERCOM_WORKER_ID", &e.worker_id)
            .str("AGENT_INTERCOM_RUN_ID", &e.run_id)
            .opt_str("workspacePath", e.workspace_path.as_deref())
            .finish();
        let health = f
            .health_details(
                JsonObject::new().str("observedLegacyState", f.health.observed_legacy_state),
            )
            .finish();
        JsonObject::new()
            .int("version", FULL_WORKER_STORE_MIGRATION_VERSION)
            .raw("worker", &self.worker.to_json())
            .raw("environment", &environment)
            .raw("health", &health)
            .raw("runtime", &f.runtime_members(JsonObject::new()).finish())
            .raw("adapter", &f.adapter_members(JsonObject::new()).finish())
            .raw("systemd", &f.systemd_members(JsonObject::new()).finish())
            .raw("notice", &f.notice_members(JsonObject::new()).finish())
            .raw(
                "controller",
                &f.controller_members(JsonObject::new()).finish(),
            )
            .finish()
    }
}

impl WorkerStoreRecord {
    /// The record as `migrateFullWorkerStoreV1` and `parseWorkerStoreRecordV2` return it.
    pub fn to_json(&self) -> String {
        let w = &self.worker;
        let f = &self.fields;
        let bound = |o: JsonObject| {
            o.str("workerIncarnationId", &w.worker_incarnation_id)
                .int("workerGeneration", w.worker_generation)
                .finish()
        };
        let environment = JsonObject::new()
            .str("AGENT_INTERCOM_WORKER_ID", &w.worker_id)
            .str(
                "AGENT_INTERCOM_WORKER_INCARNATION_ID",
                &w.worker_incarnation_id,
            )
            .str(
                "AGENT_INTERCOM_WORKER_GENERATION",
                &w.worker_generation.to_string(),
            )
            .str("AGENT_INTERCOM_RUN_ID", &w.worker_incarnation_id)
            .opt_str("workspacePath", f.environment.workspace_path.as_deref())
            .finish();
        let health = JsonObject::new()
            .str("originalLegacyState", f.health.observed_legacy_state)
            .nullable_str("canonicalState", w.mapping.state);
        let audit = JsonObject::new()
            .str("sourceEnvironmentIncarnationField", "AGENT_INTERCOM_RUN_ID")
            .str(
                "targetEnvironmentIncarnationField",
                "AGENT_INTERCOM_WORKER_INCARNATION_ID",
            )
            .str(
                "deprecatedEnvironmentAliasLastSupportedVersion",
                FULL_WORKER_STORE_V2_RECORD_VERSION,
            )
            .bool("bossRunIdDerived", false)
            .raw(
                "preservedFieldGroups",
                &string_array_json(PRESERVED_FIELD_GROUPS),
            )
            .finish();
        JsonObject::new()
            .str("version", FULL_WORKER_STORE_V2_RECORD_VERSION)
            .raw("worker", &w.to_json())
            .raw("environment", &environment)
            .raw("health", &bound(f.health_details(health)))
            .raw("runtime", &bound(f.runtime_members(JsonObject::new())))
            .raw("adapter", &bound(f.adapter_members(JsonObject::new())))
            .raw("systemd", &bound(f.systemd_members(JsonObject::new())))
            .raw("notice", &bound(f.notice_members(JsonObject::new())))
            .raw(
                "controller",
                &bound(f.controller_members(JsonObject::new())),
            )
            .raw("compatibilityAudit", &audit)
            .finish()
    }
}
