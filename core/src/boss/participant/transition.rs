//! Evidence-guarded participant state transitions: the same-generation table (every pair of
//! states either names the one evidence kind the edge requires or is denied), the
//! new-generation table (the only edges that may cross exactly one worker generation), the
//! evidence records, and `validateParticipantStateTransition`.

use super::{
    BLOCKED_RESUME_STATES, PARTICIPANT_STATE_TRANSITION_CONTRACT_VERSION, PARTICIPANT_STATES,
    STALLED_RESUME_STATES, json_or_null, literal_integer, parse_participant_state,
};
use crate::boss::{JsonObject, string_array_json};
use crate::contract::read::{
    Read, boolean, exact_keys, exact_record, fail, field, integer, member, one_of, record, string,
};
use crate::contract::{Args, Failure, Js, Out, ops};

/// `PARTICIPANT_STATE_TRANSITION_EVIDENCE_KINDS`, in the TypeScript core's order.
pub const PARTICIPANT_STATE_TRANSITION_EVIDENCE_KINDS: &[&str] = &[
    "state_confirmation",
    "registration_started",
    "readiness_reconciled",
    "legacy_idle_reconciled",
    "turn_started",
    "turn_settled",
    "intentional_pause",
    "parked_resume",
    "blocker_detected",
    "blocked_reaffirmed",
    "blocker_cleared",
    "controller_liveness_stalled",
    "controller_liveness_recovered",
    "connectivity_recovered",
    "failure_observed",
    "stop_observed",
    "new_generation_provisioned",
];

const CONFIRM: &str = "state_confirmation";
const FAILURE: &str = "failure_observed";
const RECOVERED: &str = "controller_liveness_recovered";
const CLEARED: &str = "blocker_cleared";
const STALLED: &str = "controller_liveness_stalled";
const BLOCKER: &str = "blocker_detected";

/// The exits every nonterminal state has within its generation.
const EXITS: &[(&str, &str)] = &[
    ("failed", FAILURE),
    ("lost", FAILURE),
    ("unreachable", FAILURE),
    ("stopped", "stop_observed"),
];

/// One row: the state, its own edges, whether it has [`EXITS`].
type Row = (&'static str, &'static [(&'static str, &'static str)], bool);

/// The same-generation table: for each state, its own edges (target, required evidence) and
/// whether it also has [`EXITS`]. Every other pair is denied; in particular terminal states
/// have no exits, paused cannot stall, and unreachable re-enters readiness only through
/// registering.
const SAME_GENERATION: &[Row] = &[
    (
        "provisioning",
        &[
            ("provisioning", CONFIRM),
            ("registering", "registration_started"),
        ],
        true,
    ),
    (
        "registering",
        &[
            ("registering", CONFIRM),
            ("ready", "readiness_reconciled"),
            ("waiting", "legacy_idle_reconciled"),
            ("stalled", STALLED),
            ("blocked", BLOCKER),
        ],
        true,
    ),
    (
        "ready",
        &[
            ("ready", CONFIRM),
            ("working", "turn_started"),
            ("stalled", STALLED),
            ("blocked", BLOCKER),
        ],
        true,
    ),
    (
        "working",
        &[
            ("working", CONFIRM),
            ("waiting", "turn_settled"),
            ("paused", "intentional_pause"),
            ("stalled", STALLED),
            ("blocked", BLOCKER),
        ],
        true,
    ),
    (
        "waiting",
        &[
            ("working", "turn_started"),
            ("waiting", CONFIRM),
            ("paused", "intentional_pause"),
            ("stalled", STALLED),
            ("blocked", BLOCKER),
        ],
        true,
    ),
    (
        "paused",
        &[
            ("ready", "parked_resume"),
            ("waiting", "parked_resume"),
            ("paused", CONFIRM),
        ],
        true,
    ),
    (
        "stalled",
        &[
            ("registering", RECOVERED),
            ("ready", RECOVERED),
            ("working", RECOVERED),
            ("waiting", RECOVERED),
            ("stalled", STALLED),
        ],
        true,
    ),
    (
        "blocked",
        &[
            ("registering", CLEARED),
            ("ready", CLEARED),
            ("working", CLEARED),
            ("waiting", CLEARED),
            ("paused", CLEARED),
            ("blocked", "blocked_reaffirmed"),
        ],
        true,
    ),
    ("failed", &[("failed", CONFIRM)], false),
    ("lost", &[("lost", CONFIRM)], false),
    (
        "unreachable",
        &[("registering", "connectivity_recovered")],
        true,
    ),
    ("stopped", &[("stopped", CONFIRM)], false),
];

/// `PARTICIPANT_NEW_GENERATION_TRANSITIONS`: the states one fresh worker generation may reach.
pub const PARTICIPANT_NEW_GENERATION_TRANSITIONS: &[(&str, &[&str])] = &[
    ("provisioning", &[]),
    ("registering", &[]),
    ("ready", &[]),
    ("working", &[]),
    ("waiting", &[]),
    ("paused", &["ready", "waiting"]),
    ("stalled", &[]),
    ("blocked", &[]),
    ("failed", &["provisioning"]),
    ("lost", &["provisioning"]),
    ("unreachable", &[]),
    ("stopped", &["provisioning"]),
];

/// The evidence kind the same-generation edge `from -> to` requires, or `None` when the edge is
/// denied (`PARTICIPANT_STATE_TRANSITION_TABLE[from][to]`).
pub fn same_generation_rule(from: &str, to: &str) -> Option<&'static str> {
    let (_, own, exits) = SAME_GENERATION.iter().find(|(s, ..)| *s == from)?;
    let exits: &[(&str, &str)] = if *exits { EXITS } else { &[] };
    own.iter()
        .chain(exits)
        .find(|(target, _)| *target == to)
        .map(|(_, kind)| *kind)
}

/// The states a new generation may reach from `from`.
pub fn new_generation_targets(from: &str) -> &'static [&'static str] {
    PARTICIPANT_NEW_GENERATION_TRANSITIONS
        .iter()
        .find(|(s, _)| *s == from)
        .map_or(&[], |(_, targets)| targets)
}

/// `PARTICIPANT_STATE_TRANSITION_TABLE` as JSON: every state, every target, in state order.
pub fn transition_table_json() -> String {
    let mut table = JsonObject::new();
    for from in PARTICIPANT_STATES {
        let mut row = JsonObject::new();
        for to in PARTICIPANT_STATES {
            row = row.raw(to, &json_or_null(same_generation_rule(from, to)));
        }
        table = table.raw(from, &row.finish());
    }
    table.finish()
}

/// `PARTICIPANT_NEW_GENERATION_TRANSITIONS` as JSON.
pub fn new_generation_table_json() -> String {
    let mut o = JsonObject::new();
    for (from, targets) in PARTICIPANT_NEW_GENERATION_TRANSITIONS {
        o = o.raw(from, &string_array_json(targets));
    }
    o.finish()
}

/// How one evidence member is read.
#[derive(Clone, Copy, Debug)]
enum Reader {
    /// `true`, exactly.
    True,
    /// A non-empty string.
    Text,
    /// One of these strings.
    OneOf(&'static [&'static str]),
}

use Reader::{OneOf, Text, True};

/// The five assertions of a positive readiness proof, each `true`.
const READINESS: &[(&str, Reader)] = &[
    ("adapterStartupReady", True),
    ("brokerRegistrationReady", True),
    ("bindingAttested", True),
    ("capabilityProfileAttested", True),
    ("assignmentControlSupported", True),
];

/// Each evidence kind's members after `kind` and `evidenceId`: whether the readiness
/// assertions come first, then its own members (read and written in this order).
/// One evidence kind: its name, whether it asserts readiness, its own members.
type Shape = (&'static str, bool, &'static [(&'static str, Reader)]);

const SHAPES: &[Shape] = &[
    ("state_confirmation", false, &[]),
    ("registration_started", false, &[]),
    ("readiness_reconciled", true, &[]),
    (
        "legacy_idle_reconciled",
        true,
        &[("legacyIdleHint", True), ("noActiveTurn", True)],
    ),
    ("turn_started", false, &[("turnId", Text)]),
    (
        "turn_settled",
        false,
        &[("turnId", Text), ("noActiveTurn", True)],
    ),
    ("intentional_pause", false, &[("checkpointId", Text)]),
    (
        "parked_resume",
        true,
        &[
            ("resumableState", OneOf(&["ready", "waiting"])),
            ("parkedProcessConfirmed", True),
            ("noActiveTurn", True),
        ],
    ),
    (
        "blocker_detected",
        false,
        &[
            ("resumeState", OneOf(BLOCKED_RESUME_STATES)),
            ("reason", Text),
        ],
    ),
    (
        "blocked_reaffirmed",
        false,
        &[
            ("storedResumeState", OneOf(BLOCKED_RESUME_STATES)),
            ("reason", Text),
        ],
    ),
    (
        "blocker_cleared",
        false,
        &[
            ("storedResumeState", OneOf(BLOCKED_RESUME_STATES)),
            ("blockerClearConfirmed", True),
        ],
    ),
    (
        "controller_liveness_stalled",
        false,
        &[
            ("controllerParticipantId", Text),
            ("livenessDeadlineExceeded", True),
        ],
    ),
    (
        "controller_liveness_recovered",
        false,
        &[
            ("controllerParticipantId", Text),
            ("resumableState", OneOf(STALLED_RESUME_STATES)),
            ("positiveStateEvidenceId", Text),
        ],
    ),
    (
        "connectivity_recovered",
        false,
        &[("freshReadinessReconciliationRequired", True)],
    ),
    (
        "failure_observed",
        false,
        &[("outcome", OneOf(&["failed", "lost", "unreachable"]))],
    ),
    ("stop_observed", false, &[]),
    ("new_generation_provisioned", false, &[]),
];

/// A member of an evidence record after `kind` and `evidenceId`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Member {
    /// An assertion that must be `true`.
    True,
    /// A string (an id, a reason or a state).
    Text(String),
}

/// A parsed `ParticipantStateTransitionEvidence`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// One of [`PARTICIPANT_STATE_TRANSITION_EVIDENCE_KINDS`].
    pub kind: &'static str,
    /// `evidenceId`.
    pub evidence_id: String,
    /// The kind's other members, in order.
    pub members: Vec<(&'static str, Member)>,
}

impl Evidence {
    /// The string member `key`, if the kind has it.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.members.iter().find_map(|(k, m)| match m {
            Member::Text(t) if *k == key => Some(t.as_str()),
            _ => None,
        })
    }

    /// The evidence as JSON, in the TypeScript member order.
    pub fn to_json(&self) -> String {
        let mut o = JsonObject::new()
            .str("kind", self.kind)
            .str("evidenceId", &self.evidence_id);
        for (key, m) in &self.members {
            o = match m {
                Member::True => o.bool(key, true),
                Member::Text(t) => o.str(key, t),
            };
        }
        o.finish()
    }
}

/// A parsed `ParticipantStateTransitionContextV1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransitionContext {
    /// `previousState`.
    pub previous_state: &'static str,
    /// `previousResumeState`: present exactly when the previous state is `blocked`.
    pub previous_resume_state: Option<&'static str>,
    /// `state`.
    pub state: &'static str,
    /// `previousWorkerGeneration`.
    pub previous_worker_generation: i64,
    /// `workerGeneration`.
    pub worker_generation: i64,
    /// `evidence`.
    pub evidence: Evidence,
}

impl TransitionContext {
    /// The context as JSON, in the TypeScript member order.
    pub fn to_json(&self) -> String {
        JsonObject::new()
            .int("version", PARTICIPANT_STATE_TRANSITION_CONTRACT_VERSION)
            .str("previousState", self.previous_state)
            .opt_str("previousResumeState", self.previous_resume_state)
            .str("state", self.state)
            .int("previousWorkerGeneration", self.previous_worker_generation)
            .int("workerGeneration", self.worker_generation)
            .raw("evidence", &self.evidence.to_json())
            .finish()
    }
}

fn read_true(value: &Js, path: &str) -> Read<()> {
    if boolean(value, path)? {
        Ok(())
    } else {
        fail(path, "must be true")
    }
}

/// `parseParticipantStateTransitionEvidence(value, path = "$.evidence")`: the kind and id are
/// read before the kind's exact keys.
pub fn parse_evidence(v: &Js, path: &str) -> Read<Evidence> {
    record(v, path)?;
    let at = |key: &str| member(path, key);
    let kind = one_of(
        field(v, "kind"),
        PARTICIPANT_STATE_TRANSITION_EVIDENCE_KINDS,
        &at("kind"),
    )?;
    let evidence_id = string(field(v, "evidenceId"), &at("evidenceId"))?.to_string();
    let (_, readiness, own) = SHAPES
        .iter()
        .find(|(k, ..)| *k == kind)
        .expect("every evidence kind has a shape");
    let shape: Vec<(&'static str, Reader)> = READINESS
        .iter()
        .filter(|_| *readiness)
        .chain(own.iter())
        .copied()
        .collect();
    let keys: Vec<&str> = ["kind", "evidenceId"]
        .into_iter()
        .chain(shape.iter().map(|(k, _)| *k))
        .collect();
    exact_keys(v, &keys, &[], path)?;
    let mut members = Vec::with_capacity(shape.len());
    for (key, reader) in shape {
        let value = field(v, key);
        let path = at(key);
        members.push((
            key,
            match reader {
                True => read_true(value, &path).map(|()| Member::True)?,
                Text => Member::Text(string(value, &path)?.to_string()),
                OneOf(allowed) => Member::Text(one_of(value, allowed, &path)?.to_string()),
            },
        ));
    }
    Ok(Evidence {
        kind,
        evidence_id,
        members,
    })
}

/// `parseParticipantStateTransitionContextV1(value, path = "$")`.
pub fn parse_context(v: &Js, path: &str) -> Read<TransitionContext> {
    exact_record(
        v,
        &[
            "version",
            "previousState",
            "state",
            "previousWorkerGeneration",
            "workerGeneration",
            "evidence",
        ],
        &["previousResumeState"],
        path,
    )?;
    let at = |key: &str| member(path, key);
    let previous_state = parse_participant_state(field(v, "previousState"), &at("previousState"))?;
    let previous_resume_state = match field(v, "previousResumeState") {
        Js::Undefined => None,
        r => Some(one_of(
            r,
            BLOCKED_RESUME_STATES,
            &at("previousResumeState"),
        )?),
    };
    match (previous_state == "blocked", previous_resume_state.is_some()) {
        (true, false) => {
            return fail(
                &at("previousResumeState"),
                "is required for a persisted blocked state",
            );
        }
        (false, true) => {
            return fail(
                &at("previousResumeState"),
                "is valid only for a persisted blocked state",
            );
        }
        _ => {}
    }
    literal_integer(
        field(v, "version"),
        PARTICIPANT_STATE_TRANSITION_CONTRACT_VERSION,
        &at("version"),
    )?;
    Ok(TransitionContext {
        previous_state,
        previous_resume_state,
        state: parse_participant_state(field(v, "state"), &at("state"))?,
        previous_worker_generation: integer(
            field(v, "previousWorkerGeneration"),
            &at("previousWorkerGeneration"),
            1,
        )?,
        worker_generation: integer(field(v, "workerGeneration"), &at("workerGeneration"), 1)?,
        evidence: parse_evidence(field(v, "evidence"), &at("evidence"))?,
    })
}

/// The evidence's own claims about the edge: the state it names must be the one reached (or
/// the one interrupted, or the persisted resume state).
fn check_evidence_target(c: &TransitionContext) -> Read<()> {
    let e = &c.evidence;
    let claim = |key: &str| e.text(key);
    let mismatch = |key: &str, detail: &str| fail(&format!("$.evidence.{key}"), detail);
    match e.kind {
        "failure_observed" if claim("outcome") != Some(c.state) => {
            mismatch("outcome", "must match the failure target state")
        }
        "parked_resume" if claim("resumableState") != Some(c.state) => {
            mismatch("resumableState", "must match the resumed target state")
        }
        "blocker_detected" if claim("resumeState") != Some(c.previous_state) => mismatch(
            "resumeState",
            "must preserve the state interrupted by the blocker",
        ),
        "blocked_reaffirmed" if claim("storedResumeState") != c.previous_resume_state => mismatch(
            "storedResumeState",
            "must preserve the persisted blocked resume state",
        ),
        "blocker_cleared" if claim("storedResumeState") != c.previous_resume_state => mismatch(
            "storedResumeState",
            "must match the persisted blocked resume state",
        ),
        "blocker_cleared" if claim("storedResumeState") != Some(c.state) => {
            mismatch("storedResumeState", "must match the recovered target state")
        }
        "controller_liveness_recovered" if claim("resumableState") != Some(c.state) => mismatch(
            "resumableState",
            "must match the positively evidenced target state",
        ),
        _ => Ok(()),
    }
}

/// `validateParticipantStateTransition(value)`: the generation step first (never back, at most
/// one), then the new-generation or the same-generation table, the evidence kind the edge
/// requires, and the evidence's own claims.
pub fn validate_transition(v: &Js) -> Read<TransitionContext> {
    let c = parse_context(v, "$")?;
    let step = c.worker_generation - c.previous_worker_generation;
    if step < 0 {
        return fail("$.workerGeneration", "must not regress");
    }
    if step > 1 {
        return fail(
            "$.workerGeneration",
            "must increase by exactly one generation",
        );
    }
    let required = if step == 1 {
        if !new_generation_targets(c.previous_state).contains(&c.state) {
            return fail(
                "$.state",
                format!(
                    "transition {} -> {} is not canonical for a new generation",
                    c.previous_state, c.state
                ),
            );
        }
        if c.previous_state == "paused" {
            "parked_resume"
        } else {
            "new_generation_provisioned"
        }
    } else {
        match same_generation_rule(c.previous_state, c.state) {
            Some(kind) => kind,
            None => {
                return fail(
                    "$.state",
                    format!(
                        "transition {} -> {} is not canonical for the current generation",
                        c.previous_state, c.state
                    ),
                );
            }
        }
    };
    if c.evidence.kind != required {
        return fail(
            "$.evidence.kind",
            format!("transition requires {required} evidence"),
        );
    }
    check_evidence_target(&c)?;
    Ok(c)
}

pub(super) fn parse_evidence_op(a: Args<'_>) -> Result<Out, Failure> {
    let path = ops::path(a, 1, "$.evidence")?;
    Ok(Out::Json(parse_evidence(a.get(0), &path)?.to_json()))
}

pub(super) fn parse_context_op(a: Args<'_>) -> Result<Out, Failure> {
    let path = ops::path(a, 1, "$")?;
    Ok(Out::Json(parse_context(a.get(0), &path)?.to_json()))
}

pub(super) fn validate_op(a: Args<'_>) -> Result<Out, Failure> {
    validate_transition(a.get(0))?;
    Ok(Out::Undefined)
}

/// The tables and the evidence kinds, added to `./boss`'s constant object.
pub(crate) fn add_constants(o: JsonObject) -> JsonObject {
    o.raw(
        "PARTICIPANT_STATE_TRANSITION_EVIDENCE_KINDS",
        &string_array_json(PARTICIPANT_STATE_TRANSITION_EVIDENCE_KINDS),
    )
    .raw(
        "PARTICIPANT_STATE_TRANSITION_TABLE",
        &transition_table_json(),
    )
    .raw(
        "PARTICIPANT_NEW_GENERATION_TRANSITIONS",
        &new_generation_table_json(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(previous: &str, state: &str, generations: (i64, i64), evidence: &str) -> Js {
        Js::parse_json(&format!(
            r#"{{"version":1,"previousState":"{previous}","state":"{state}",
            "previousWorkerGeneration":{},"workerGeneration":{},"evidence":{evidence}}}"#,
            generations.0, generations.1
        ))
        .unwrap()
    }

    fn message(v: &Js) -> String {
        validate_transition(v).unwrap_err().to_string()
    }

    #[test]
    fn the_tables_cover_every_state_in_order() {
        let states: Vec<&str> = SAME_GENERATION.iter().map(|(s, ..)| *s).collect();
        assert_eq!(states, PARTICIPANT_STATES);
        let states: Vec<&str> = PARTICIPANT_NEW_GENERATION_TRANSITIONS
            .iter()
            .map(|(s, _)| *s)
            .collect();
        assert_eq!(states, PARTICIPANT_STATES);
        let kinds: Vec<&str> = SHAPES.iter().map(|(k, ..)| *k).collect();
        assert_eq!(kinds, PARTICIPANT_STATE_TRANSITION_EVIDENCE_KINDS);
        for (_, own, _) in SAME_GENERATION {
            for (to, kind) in *own {
                assert!(PARTICIPANT_STATES.contains(to));
                assert!(PARTICIPANT_STATE_TRANSITION_EVIDENCE_KINDS.contains(kind));
            }
        }
        assert_eq!(
            same_generation_rule("unreachable", "unreachable"),
            Some(FAILURE)
        );
        assert_eq!(same_generation_rule("paused", "stalled"), None);
        assert_eq!(same_generation_rule("failed", "stopped"), None);
    }

    #[test]
    fn generations_step_at_most_once_and_need_their_evidence() {
        let fresh = r#"{"kind":"new_generation_provisioned","evidenceId":"g"}"#;
        assert!(validate_transition(&context("stopped", "provisioning", (7, 8), fresh)).is_ok());
        assert_eq!(
            message(&context("stopped", "provisioning", (7, 9), fresh)),
            "$.workerGeneration: must increase by exactly one generation"
        );
        assert_eq!(
            message(&context("stopped", "provisioning", (7, 6), fresh)),
            "$.workerGeneration: must not regress"
        );
        assert_eq!(
            message(&context("working", "provisioning", (7, 8), fresh)),
            "$.state: transition working -> provisioning is not canonical for a new generation"
        );
        assert_eq!(
            message(&context("paused", "ready", (7, 8), fresh)),
            "$.evidence.kind: transition requires parked_resume evidence"
        );
        assert_eq!(
            message(&context("failed", "lost", (7, 7), fresh)),
            "$.state: transition failed -> lost is not canonical for the current generation"
        );
    }

    #[test]
    fn evidence_is_exact_and_names_its_target() {
        let lost = r#"{"kind":"failure_observed","evidenceId":"x","outcome":"lost"}"#;
        assert!(validate_transition(&context("unreachable", "lost", (3, 3), lost)).is_ok());
        assert_eq!(
            message(&context("unreachable", "failed", (3, 3), lost)),
            "$.evidence.outcome: must match the failure target state"
        );
        let extra = r#"{"kind":"stop_observed","evidenceId":"x","turnId":"t"}"#;
        assert_eq!(
            message(&context("ready", "stopped", (3, 3), extra)),
            "$.evidence.turnId: is not supported"
        );
        let unknown = r#"{"kind":"guess","evidenceId":""}"#;
        assert!(
            message(&context("ready", "stopped", (3, 3), unknown))
                .starts_with("$.evidence.kind: must be one of: state_confirmation,")
        );
        let not_true =
            r#"{"kind":"turn_settled","evidenceId":"x","turnId":"t","noActiveTurn":false}"#;
        assert_eq!(
            message(&context("working", "waiting", (3, 3), not_true)),
            "$.evidence.noActiveTurn: must be true"
        );
        let parsed = parse_evidence(&Js::parse_json(lost).unwrap(), "$.evidence").unwrap();
        assert_eq!(parsed.to_json(), lost);
    }

    #[test]
    fn a_blocked_state_carries_its_resume_state() {
        let clear = r#"{"kind":"blocker_cleared","evidenceId":"x","storedResumeState":"working",
            "blockerClearConfirmed":true}"#;
        assert_eq!(
            message(&context("blocked", "working", (3, 3), clear)),
            "$.previousResumeState: is required for a persisted blocked state"
        );
        let mut with_resume = context("blocked", "working", (3, 3), clear);
        if let Js::Object(o) = &mut with_resume {
            o.members.push((
                crate::contract::JsStr {
                    text: "previousResumeState".into(),
                    lone: None,
                },
                Js::str("ready"),
            ));
        }
        assert_eq!(
            message(&with_resume),
            "$.evidence.storedResumeState: must match the persisted blocked resume state"
        );
    }
}
