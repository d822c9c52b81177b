//! The legacy compatibility fields a worker-store migration carries over unchanged: the
//! environment, health, runtime, adapter, systemd unit, notice (with the owning Manager
//! recipient) and controller groups (`LegacyWorkerCompatibilityFieldsV1`).

use std::collections::HashSet;

use super::{JsonObject, WORKER_STORE_MANAGER_RECIPIENT_CONTEXTS};
use crate::boss::participant::LEGACY_WORKER_STATES;
use crate::boss::string_array_json;
use crate::contract::Js;
use crate::contract::read::{
    Read, boolean, exact_record, fail, field, integer, member, one_of, optional, optional_string,
    optional_timestamp, read_at, string, string_array, timestamp,
};

/// Where notices for the worker go: the Manager that owns it, bound to a binding epoch, and
/// for an interactive Manager (`pi`, `opencode`) its authenticated session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwningManagerRecipient {
    /// `recipientPrincipalId`.
    pub principal_id: String,
    /// `recipientBindingEpoch` (≥ 1).
    pub binding_epoch: i64,
    /// `recipientContext`, one of [`WORKER_STORE_MANAGER_RECIPIENT_CONTEXTS`].
    pub context: &'static str,
    /// `recipientSessionId` (interactive) and `recipientTargetSessionId` (optional); `None`
    /// for `headless_cli`, which has neither.
    pub session: Option<(String, Option<String>)>,
}

/// `environment`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Environment {
    /// `AGENT_INTERCOM_WORKER_ID`.
    pub worker_id: String,
    /// `AGENT_INTERCOM_RUN_ID`: the legacy incarnation.
    pub run_id: String,
    /// `workspacePath`.
    pub workspace_path: Option<String>,
}

/// `health`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Health {
    /// `observedLegacyState`.
    pub observed_legacy_state: &'static str,
    /// `lastConfirmedAt`.
    pub last_confirmed_at: Option<String>,
    /// `failureCode`.
    pub failure_code: Option<String>,
}

/// `runtime`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Runtime {
    /// `runtimeId`.
    pub runtime_id: String,
    /// `processId` (≥ 1).
    pub process_id: Option<i64>,
    /// `leaseExpiresAt`.
    pub lease_expires_at: Option<String>,
    /// `maxRuntimeAt`.
    pub max_runtime_at: Option<String>,
}

/// `adapter`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adapter {
    /// `adapterId`.
    pub adapter_id: String,
    /// `adapterVersion`.
    pub adapter_version: String,
    /// `sessionId`.
    pub session_id: Option<String>,
    /// `readinessReported`.
    pub readiness_reported: bool,
}

/// `systemd`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Systemd {
    /// `unitName`.
    pub unit_name: String,
    /// `activeState`.
    pub active_state: String,
    /// `subState`.
    pub sub_state: String,
    /// `observedAt`.
    pub observed_at: String,
}

/// `notice`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// `pendingNoticeIds`, without duplicates.
    pub pending_notice_ids: Vec<String>,
    /// `lastDeliveredNoticeId`.
    pub last_delivered_notice_id: Option<String>,
    /// `owningManagerRecipient`.
    pub owning_manager_recipient: OwningManagerRecipient,
}

/// `controller`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Controller {
    /// `projectionId`.
    pub projection_id: Option<String>,
    /// `revision` (≥ 0).
    pub revision: i64,
}

/// The seven groups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompatibilityFields {
    /// `environment`.
    pub environment: Environment,
    /// `health`.
    pub health: Health,
    /// `runtime`.
    pub runtime: Runtime,
    /// `adapter`.
    pub adapter: Adapter,
    /// `systemd`.
    pub systemd: Systemd,
    /// `notice`.
    pub notice: Notice,
    /// `controller`.
    pub controller: Controller,
}

fn owned(value: Option<&str>) -> Option<String> {
    value.map(str::to_string)
}

/// The owning Manager recipient at `path`: its context decides which keys it may have, and
/// its three common fields are read before its keys are checked.
fn parse_recipient(v: &Js, path: &str) -> Read<OwningManagerRecipient> {
    crate::contract::read::record(v, path)?;
    let context = read_at(v, path, "recipientContext", |x, p| {
        one_of(x, WORKER_STORE_MANAGER_RECIPIENT_CONTEXTS, p)
    })?;
    let principal_id = read_at(v, path, "recipientPrincipalId", string)?;
    let binding_epoch = read_at(v, path, "recipientBindingEpoch", |x, p| integer(x, p, 1))?;
    const COMMON: [&str; 3] = [
        "recipientPrincipalId",
        "recipientBindingEpoch",
        "recipientContext",
    ];
    let session = if context == "headless_cli" {
        exact_record(v, &COMMON, &[], path)?;
        None
    } else {
        let required = [COMMON[0], COMMON[1], COMMON[2], "recipientSessionId"];
        exact_record(v, &required, &["recipientTargetSessionId"], path)?;
        let session = read_at(v, path, "recipientSessionId", string)?;
        let target = read_at(v, path, "recipientTargetSessionId", optional_string)?;
        Some((session.to_string(), owned(target)))
    };
    Ok(OwningManagerRecipient {
        principal_id: principal_id.to_string(),
        binding_epoch,
        context,
        session,
    })
}

/// A group: a plain object of exactly these keys.
fn group<'v>(
    v: &'v Js,
    key: &str,
    path: &str,
    required: &[&str],
    optional: &[&str],
) -> Read<(&'v Js, String)> {
    let at = member(path, key);
    let group = field(v, key);
    exact_record(group, required, optional, &at)?;
    Ok((group, at))
}

/// `parseCompatibilityFields(value, path)`: the groups of `value`, in the TypeScript order.
pub fn parse_compatibility_fields(v: &Js, path: &str) -> Read<CompatibilityFields> {
    let (g, at) = group(
        v,
        "environment",
        path,
        &["AGENT_INTERCOM_WORKER_ID", "AGENT_INTERCOM_RUN_ID"],
        &["workspacePath"],
    )?;
    let read = |key: &str| read_at(g, &at, key, string).map(str::to_string);
    let environment = Environment {
        worker_id: read("AGENT_INTERCOM_WORKER_ID")?,
        run_id: read("AGENT_INTERCOM_RUN_ID")?,
        workspace_path: owned(read_at(g, &at, "workspacePath", optional_string)?),
    };

    let (g, at) = group(
        v,
        "health",
        path,
        &["observedLegacyState"],
        &["lastConfirmedAt", "failureCode"],
    )?;
    let health = Health {
        observed_legacy_state: read_at(g, &at, "observedLegacyState", |x, p| {
            one_of(x, LEGACY_WORKER_STATES, p)
        })?,
        last_confirmed_at: owned(read_at(g, &at, "lastConfirmedAt", optional_timestamp)?),
        failure_code: owned(read_at(g, &at, "failureCode", optional_string)?),
    };

    let (g, at) = group(
        v,
        "runtime",
        path,
        &["runtimeId"],
        &["processId", "leaseExpiresAt", "maxRuntimeAt"],
    )?;
    let runtime = Runtime {
        runtime_id: read_at(g, &at, "runtimeId", string)?.to_string(),
        process_id: read_at(g, &at, "processId", |x, p| {
            optional(x, |x| integer(x, p, 1))
        })?,
        lease_expires_at: owned(read_at(g, &at, "leaseExpiresAt", optional_timestamp)?),
        max_runtime_at: owned(read_at(g, &at, "maxRuntimeAt", optional_timestamp)?),
    };

    let (g, at) = group(
        v,
        "adapter",
        path,
        &["adapterId", "adapterVersion", "readinessReported"],
        &["sessionId"],
    )?;
    let adapter = Adapter {
        adapter_id: read_at(g, &at, "adapterId", string)?.to_string(),
        adapter_version: read_at(g, &at, "adapterVersion", string)?.to_string(),
        session_id: owned(read_at(g, &at, "sessionId", optional_string)?),
        readiness_reported: read_at(g, &at, "readinessReported", boolean)?,
    };

    let (g, at) = group(
        v,
        "systemd",
        path,
        &["unitName", "activeState", "subState", "observedAt"],
        &[],
    )?;
    let read = |key: &str| read_at(g, &at, key, string).map(str::to_string);
    let systemd = Systemd {
        unit_name: read("unitName")?,
        active_state: read("activeState")?,
        sub_state: read("subState")?,
        observed_at: read_at(g, &at, "observedAt", timestamp)?.to_string(),
    };

    let (g, at) = group(
        v,
        "notice",
        path,
        &["pendingNoticeIds", "owningManagerRecipient"],
        &["lastDeliveredNoticeId"],
    )?;
    let ids_at = member(&at, "pendingNoticeIds");
    let ids = string_array(field(g, "pendingNoticeIds"), &ids_at)?;
    let mut seen = HashSet::with_capacity(ids.len());
    if !ids.iter().all(|id| seen.insert(*id)) {
        return fail(&ids_at, "must not contain duplicates");
    }
    let notice = Notice {
        pending_notice_ids: ids.iter().map(|s| s.to_string()).collect(),
        last_delivered_notice_id: owned(read_at(g, &at, "lastDeliveredNoticeId", optional_string)?),
        owning_manager_recipient: read_at(g, &at, "owningManagerRecipient", parse_recipient)?,
    };

    let (g, at) = group(v, "controller", path, &["revision"], &["projectionId"])?;
    let controller = Controller {
        projection_id: owned(read_at(g, &at, "projectionId", optional_string)?),
        revision: read_at(g, &at, "revision", |x, p| integer(x, p, 0))?,
    };
    Ok(CompatibilityFields {
        environment,
        health,
        runtime,
        adapter,
        systemd,
        notice,
        controller,
    })
}

impl OwningManagerRecipient {
    fn to_json(&self) -> String {
        let o = JsonObject::new()
            .str("recipientPrincipalId", &self.principal_id)
            .int("recipientBindingEpoch", self.binding_epoch)
            .str("recipientContext", self.context);
        match &self.session {
            None => o.finish(),
            Some((session, target)) => o
                .str("recipientSessionId", session)
                .opt_str("recipientTargetSessionId", target.as_deref())
                .finish(),
        }
    }
}

impl CompatibilityFields {
    /// The `runtime` group's members.
    pub(super) fn runtime_members(&self, o: JsonObject) -> JsonObject {
        let r = &self.runtime;
        o.str("runtimeId", &r.runtime_id)
            .opt_int("processId", r.process_id)
            .opt_str("leaseExpiresAt", r.lease_expires_at.as_deref())
            .opt_str("maxRuntimeAt", r.max_runtime_at.as_deref())
    }

    /// The `adapter` group's members.
    pub(super) fn adapter_members(&self, o: JsonObject) -> JsonObject {
        let a = &self.adapter;
        o.str("adapterId", &a.adapter_id)
            .str("adapterVersion", &a.adapter_version)
            .opt_str("sessionId", a.session_id.as_deref())
            .bool("readinessReported", a.readiness_reported)
    }

    /// The `systemd` group's members.
    pub(super) fn systemd_members(&self, o: JsonObject) -> JsonObject {
        let s = &self.systemd;
        o.str("unitName", &s.unit_name)
            .str("activeState", &s.active_state)
            .str("subState", &s.sub_state)
            .str("observedAt", &s.observed_at)
    }

    /// The `notice` group's members.
    pub(super) fn notice_members(&self, o: JsonObject) -> JsonObject {
        let n = &self.notice;
        let ids: Vec<&str> = n.pending_notice_ids.iter().map(String::as_str).collect();
        o.raw("pendingNoticeIds", &string_array_json(&ids))
            .opt_str(
                "lastDeliveredNoticeId",
                n.last_delivered_notice_id.as_deref(),
            )
            .raw(
                "owningManagerRecipient",
                &n.owning_manager_recipient.to_json(),
            )
    }

    /// The `controller` group's members.
    pub(super) fn controller_members(&self, o: JsonObject) -> JsonObject {
        let c = &self.controller;
        o.opt_str("projectionId", c.projection_id.as_deref())
            .int("revision", c.revision)
    }

    /// The `lastConfirmedAt` and `failureCode` of `health`.
    pub(super) fn health_details(&self, o: JsonObject) -> JsonObject {
        o.opt_str("lastConfirmedAt", self.health.last_confirmed_at.as_deref())
            .opt_str("failureCode", self.health.failure_code.as_deref())
    }
}
