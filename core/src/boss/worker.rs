//! Worker identity v2, its event form and its environment form.
//!
//! The three readers return fresh objects, as the TypeScript core does. The Boss triple
//! (`bossRunId`, `participantId`, `bindingEpoch`) is all present or all absent, and the
//! deprecated `AGENT_INTERCOM_RUN_ID` is only ever an incarnation id, never Boss authority.

use super::JsonObject;
use crate::contract::read::{
    self, exact_keys, exact_record, fail, field, integer, member, optional_string, string,
};
use crate::contract::{Args, Failure, Js, Op, Out};

/// `WORKER_IDENTITY_VERSION`.
pub const WORKER_IDENTITY_VERSION: &str = "orc.worker-identity.v2";

const IDENTITY_KEYS: &[&str] = &[
    "version",
    "workerId",
    "workerIncarnationId",
    "workerGeneration",
];
const BOSS_KEYS: &[&str] = &["bossRunId", "participantId", "bindingEpoch"];

const ENV_REQUIRED: &[&str] = &[
    "AGENT_INTERCOM_WORKER_ID",
    "AGENT_INTERCOM_WORKER_GENERATION",
];
const ENV_OPTIONAL: &[&str] = &[
    "AGENT_INTERCOM_WORKER_INCARNATION_ID",
    "AGENT_INTERCOM_BOSS_RUN_ID",
    "AGENT_INTERCOM_PARTICIPANT_ID",
    "AGENT_INTERCOM_BINDING_EPOCH",
    "AGENT_INTERCOM_RUN_ID",
];
const BOSS_AUTHORITY_PREFIXES: &[&str] = &[
    "AGENT_INTERCOM_BOSS_",
    "AGENT_INTERCOM_PARTICIPANT_",
    "AGENT_INTERCOM_BINDING_",
];

/// A parsed identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerIdentity {
    /// `workerId`.
    pub worker_id: String,
    /// `workerIncarnationId`.
    pub worker_incarnation_id: String,
    /// `workerGeneration` (≥ 1).
    pub worker_generation: i64,
    /// The Boss triple, when present.
    pub boss: Option<(String, String, i64)>,
}

impl WorkerIdentity {
    /// The identity as JSON; `with_version` adds the store-envelope version first.
    pub fn to_json(&self, with_version: bool) -> String {
        let mut o = JsonObject::new();
        if with_version {
            o = o.str("version", WORKER_IDENTITY_VERSION);
        }
        o = o
            .str("workerId", &self.worker_id)
            .str("workerIncarnationId", &self.worker_incarnation_id)
            .int("workerGeneration", self.worker_generation);
        if let Some((run, participant, epoch)) = &self.boss {
            o = o
                .str("bossRunId", run)
                .str("participantId", participant)
                .int("bindingEpoch", *epoch);
        }
        o.finish()
    }
}

/// The fields after the version check (shared by the identity and its event form).
fn identity_fields(v: &Js) -> read::Read<WorkerIdentity> {
    let worker_id = string(field(v, "workerId"), "$.workerId")?.to_string();
    let incarnation = string(field(v, "workerIncarnationId"), "$.workerIncarnationId")?;
    let generation = integer(field(v, "workerGeneration"), "$.workerGeneration", 1)?;
    let run = optional_string(field(v, "bossRunId"), "$.bossRunId")?;
    let participant = optional_string(field(v, "participantId"), "$.participantId")?;
    let epoch = match field(v, "bindingEpoch") {
        Js::Undefined => None,
        e => Some(integer(e, "$.bindingEpoch", 1)?),
    };
    let boss = match (run, participant, epoch) {
        (None, None, None) => None,
        (Some(r), Some(p), Some(e)) => Some((r.to_string(), p.to_string(), e)),
        _ => {
            return fail(
                "$",
                "bossRunId, participantId, and bindingEpoch must be present together",
            );
        }
    };
    Ok(WorkerIdentity {
        worker_id,
        worker_incarnation_id: incarnation.to_string(),
        worker_generation: generation,
        boss,
    })
}

/// `parseWorkerIdentityV2`.
pub fn parse_worker_identity(v: &Js) -> read::Read<WorkerIdentity> {
    exact_record(v, IDENTITY_KEYS, BOSS_KEYS, "$")?;
    let version = field(v, "version");
    if version.as_str() != Some(WORKER_IDENTITY_VERSION) {
        return fail(
            "$.version",
            format!("unsupported version: {}", version.js_string()),
        );
    }
    identity_fields(v)
}

/// `parseWorkerEventIdentityV2`: the identity without its store-envelope version.
pub fn parse_worker_event_identity(v: &Js) -> read::Read<WorkerIdentity> {
    exact_record(v, &IDENTITY_KEYS[1..], BOSS_KEYS, "$")?;
    identity_fields(v)
}

fn positive_integer_env(value: &Js, path: &str) -> read::Read<i64> {
    let text = string(value, path)?;
    let b = text.as_bytes();
    if b.is_empty() || !(b'1'..=b'9').contains(&b[0]) || !b.iter().all(u8::is_ascii_digit) {
        return fail(path, "must be a positive base-10 integer");
    }
    // `Number(text)` then `readInteger(..., 1)`: beyond 2^53 - 1 it is not a safe integer.
    match text.parse::<i64>() {
        Ok(n) if n <= 9_007_199_254_740_991 => Ok(n),
        _ => fail(path, "must be a safe integer >= 1"),
    }
}

/// `workerIdentityFromEnvironment(env)`.
pub fn worker_identity_from_environment(v: &Js) -> read::Read<WorkerIdentity> {
    let Js::Object(object) = v else {
        return fail("$", "must be an environment object");
    };
    // Only the supported keys are taken; any other key with a Boss authority prefix is an
    // error, and everything else in the environment is ignored (symbols too).
    let mut projected: Vec<(&str, &Js)> = Vec::new();
    for (key, item) in &object.members {
        let name = key.text.as_str();
        let supported =
            key.lone.is_none() && (ENV_REQUIRED.contains(&name) || ENV_OPTIONAL.contains(&name));
        let authority_like = BOSS_AUTHORITY_PREFIXES.iter().any(|p| name.starts_with(p));
        if !supported && !authority_like {
            continue;
        }
        let path = member("$", name);
        if !supported {
            return fail(&path, "is not a supported Boss authority environment field");
        }
        if matches!(item, Js::Hidden) {
            return fail(&path, "must be an enumerable data property");
        }
        projected.push((name, item));
    }
    let env = Js::object(projected.iter().map(|(k, v)| (*k, (*v).clone())).collect());
    exact_keys(&env, ENV_REQUIRED, ENV_OPTIONAL, "$")?;
    let get = |key: &str| field(&env, key);
    let canonical = optional_string(
        get("AGENT_INTERCOM_WORKER_INCARNATION_ID"),
        "$.AGENT_INTERCOM_WORKER_INCARNATION_ID",
    )?;
    let deprecated = optional_string(get("AGENT_INTERCOM_RUN_ID"), "$.AGENT_INTERCOM_RUN_ID")?;
    if let (Some(c), Some(d)) = (canonical, deprecated)
        && c != d
    {
        return fail(
            "$.AGENT_INTERCOM_RUN_ID",
            "must match the canonical worker incarnation during migration",
        );
    }
    let Some(incarnation) = canonical.or(deprecated) else {
        return fail(
            "$.AGENT_INTERCOM_WORKER_INCARNATION_ID",
            "is required when no deprecated incarnation is present",
        );
    };
    let run = optional_string(
        get("AGENT_INTERCOM_BOSS_RUN_ID"),
        "$.AGENT_INTERCOM_BOSS_RUN_ID",
    )?;
    let participant = optional_string(
        get("AGENT_INTERCOM_PARTICIPANT_ID"),
        "$.AGENT_INTERCOM_PARTICIPANT_ID",
    )?;
    let epoch = match get("AGENT_INTERCOM_BINDING_EPOCH") {
        Js::Undefined => None,
        e => Some(positive_integer_env(e, "$.AGENT_INTERCOM_BINDING_EPOCH")?),
    };
    if deprecated.is_some() && canonical.is_none() && run.is_some() {
        return fail(
            "$.AGENT_INTERCOM_RUN_ID",
            "a deprecated incarnation-only environment cannot establish Boss authority",
        );
    }
    let worker_id = string(
        get("AGENT_INTERCOM_WORKER_ID"),
        "$.AGENT_INTERCOM_WORKER_ID",
    )?;
    let generation = positive_integer_env(
        get("AGENT_INTERCOM_WORKER_GENERATION"),
        "$.AGENT_INTERCOM_WORKER_GENERATION",
    )?;
    let mut built = vec![
        ("version", Js::str(WORKER_IDENTITY_VERSION)),
        ("workerId", Js::str(worker_id)),
        ("workerIncarnationId", Js::str(incarnation)),
        ("workerGeneration", Js::Num(generation as f64)),
    ];
    if let Some(r) = run {
        built.push(("bossRunId", Js::str(r)));
    }
    if let Some(p) = participant {
        built.push(("participantId", Js::str(p)));
    }
    if let Some(e) = epoch {
        built.push(("bindingEpoch", Js::Num(e as f64)));
    }
    parse_worker_identity(&Js::object(built))
}

fn parse_identity_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(parse_worker_identity(a.get(0))?.to_json(true)))
}

fn from_environment_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(
        worker_identity_from_environment(a.get(0))?.to_json(true),
    ))
}

fn parse_event_identity_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(
        parse_worker_event_identity(a.get(0))?.to_json(false),
    ))
}

/// This module's constants, added to `./boss`'s constant object.
pub(crate) fn add_constants(o: JsonObject) -> JsonObject {
    o.str("WORKER_IDENTITY_VERSION", WORKER_IDENTITY_VERSION)
}

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "boss.parseWorkerIdentityV2",
        run: parse_identity_op,
    },
    Op {
        name: "boss.workerIdentityFromEnvironment",
        run: from_environment_op,
    },
    Op {
        name: "boss.parseWorkerEventIdentityV2",
        run: parse_event_identity_op,
    },
];
