//! `ParticipantHealthEventV1`: one observed state change of a bound participant.

use super::{
    PARTICIPANT_HEALTH_EVENT_VERSION, PARTICIPANT_HEALTH_SEVERITIES, json_or_null, literal_integer,
    nullable_string, parse_participant_state, store_result,
};
use crate::boss::JsonObject;
use crate::contract::read::{
    Read, exact_record, fail, field, integer, member, one_of, parse_timestamp, string, timestamp,
};
use crate::contract::{Args, Failure, Js, Out, ops};

const REQUIRED: &[&str] = &[
    "version",
    "eventId",
    "bossRunId",
    "participantId",
    "bindingEpoch",
    "previousState",
    "state",
    "severity",
    "failureCode",
    "reason",
    "suggestedRecovery",
    "occurredAt",
];

/// The states an event may only enter with an explicit reason.
const EXPLICIT_REASON_STATES: &[&str] = &["blocked", "failed", "lost", "unreachable"];

/// A parsed health event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthEvent {
    /// `eventId`.
    pub event_id: String,
    /// `bossRunId`.
    pub boss_run_id: String,
    /// `participantId`.
    pub participant_id: String,
    /// `bindingEpoch` (>= 1).
    pub binding_epoch: i64,
    /// `previousState`.
    pub previous_state: &'static str,
    /// `state`.
    pub state: &'static str,
    /// One of [`PARTICIPANT_HEALTH_SEVERITIES`].
    pub severity: &'static str,
    /// `failureCode` (required for `failed`).
    pub failure_code: Option<String>,
    /// `reason` (required for the explicit-reason states).
    pub reason: Option<String>,
    /// `suggestedRecovery`.
    pub suggested_recovery: Option<String>,
    /// `occurredAt`.
    pub occurred_at: String,
    /// `acknowledgedAt`, not before `occurredAt`.
    pub acknowledged_at: Option<String>,
}

impl HealthEvent {
    /// The event as JSON, in the TypeScript member order.
    pub fn to_json(&self) -> String {
        JsonObject::new()
            .int("version", PARTICIPANT_HEALTH_EVENT_VERSION)
            .str("eventId", &self.event_id)
            .str("bossRunId", &self.boss_run_id)
            .str("participantId", &self.participant_id)
            .int("bindingEpoch", self.binding_epoch)
            .str("previousState", self.previous_state)
            .str("state", self.state)
            .str("severity", self.severity)
            .raw("failureCode", &json_or_null(self.failure_code.as_deref()))
            .raw("reason", &json_or_null(self.reason.as_deref()))
            .raw(
                "suggestedRecovery",
                &json_or_null(self.suggested_recovery.as_deref()),
            )
            .str("occurredAt", &self.occurred_at)
            .opt_str("acknowledgedAt", self.acknowledged_at.as_deref())
            .finish()
    }
}

/// `parseParticipantHealthEventV1(value, path = "$")`.
pub fn parse_health_event(v: &Js, path: &str) -> Read<HealthEvent> {
    exact_record(v, REQUIRED, &["acknowledgedAt"], path)?;
    let at = |key: &str| member(path, key);
    let text = |key: &str| -> Read<String> { Ok(string(field(v, key), &at(key))?.to_string()) };
    literal_integer(
        field(v, "version"),
        PARTICIPANT_HEALTH_EVENT_VERSION,
        &at("version"),
    )?;
    let event = HealthEvent {
        event_id: text("eventId")?,
        boss_run_id: text("bossRunId")?,
        participant_id: text("participantId")?,
        binding_epoch: integer(field(v, "bindingEpoch"), &at("bindingEpoch"), 1)?,
        previous_state: parse_participant_state(field(v, "previousState"), &at("previousState"))?,
        state: parse_participant_state(field(v, "state"), &at("state"))?,
        severity: one_of(
            field(v, "severity"),
            PARTICIPANT_HEALTH_SEVERITIES,
            &at("severity"),
        )?,
        failure_code: nullable_string(field(v, "failureCode"), &at("failureCode"))?,
        reason: nullable_string(field(v, "reason"), &at("reason"))?,
        suggested_recovery: nullable_string(
            field(v, "suggestedRecovery"),
            &at("suggestedRecovery"),
        )?,
        occurred_at: timestamp(field(v, "occurredAt"), &at("occurredAt"))?.to_string(),
        acknowledged_at: match field(v, "acknowledgedAt") {
            Js::Undefined => None,
            a => Some(timestamp(a, &at("acknowledgedAt"))?.to_string()),
        },
    };
    if EXPLICIT_REASON_STATES.contains(&event.state) && event.reason.is_none() {
        return fail(
            &at("reason"),
            format!("{} requires an explicit reason", event.state),
        );
    }
    if event.state == "failed" && event.failure_code.is_none() {
        return fail(
            &at("failureCode"),
            "failed requires an explicit failure code",
        );
    }
    if let Some(acknowledged) = &event.acknowledged_at
        && parse_timestamp(acknowledged) < parse_timestamp(&event.occurred_at)
    {
        return fail(&at("acknowledgedAt"), "must not precede occurredAt");
    }
    Ok(event)
}

pub(super) fn parse_op(a: Args<'_>) -> Result<Out, Failure> {
    let path = ops::path(a, 1, "$")?;
    Ok(Out::Json(parse_health_event(a.get(0), &path)?.to_json()))
}

pub(super) fn store_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(store_result(
        a.get(0),
        PARTICIPANT_HEALTH_EVENT_VERSION,
        |v| parse_health_event(v, "$").map(|e| e.to_json()),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVENT: &str = r#"{"version":1,"eventId":"e","bossRunId":"r","participantId":"p",
        "bindingEpoch":4,"previousState":"working","state":"blocked","severity":"warning",
        "failureCode":null,"reason":"permission_denied","suggestedRecovery":null,
        "occurredAt":"2026-07-28T12:01:00.000Z","acknowledgedAt":"2026-07-28T12:02:00.000Z"}"#;

    fn message(text: &str) -> String {
        parse_health_event(&Js::parse_snapshot(text).unwrap(), "$")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn events_parse_fresh_and_in_order() {
        let event = parse_health_event(&Js::parse_json(EVENT).unwrap(), "$").unwrap();
        assert_eq!(
            Js::parse_json(&event.to_json()).unwrap(),
            Js::parse_json(EVENT).unwrap()
        );
        assert_eq!(
            message(&EVENT.replace(r#""reason":"permission_denied""#, r#""reason":null"#)),
            "$.reason: blocked requires an explicit reason"
        );
        assert_eq!(
            message(&EVENT.replace("12:02:00", "11:59:59")),
            "$.acknowledgedAt: must not precede occurredAt"
        );
        assert_eq!(
            message(&EVENT.replace(r#""version":1"#, r#""version":2"#)),
            "$.version: unsupported version 2; expected 1"
        );
        assert_eq!(
            message(&EVENT.replace(r#""state":"blocked""#, r#""state":"failed""#)),
            "$.failureCode: failed requires an explicit failure code"
        );
        // Keys before values; the version before the other members.
        assert_eq!(message(r#"{"version":2}"#), "$.eventId: is required");
        assert_eq!(
            message(
                &EVENT
                    .replace(r#""version":1"#, r#""version":"1""#)
                    .replace("\"e\"", "1")
            ),
            "$.version: must be a safe integer >= 0"
        );
    }
}
