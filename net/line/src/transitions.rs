//! The task and run state machine, without I/O (docs/line.md, "Tasks", "Exchanges", "The
//! native run lab"): what a task's status, adoption and foreign id become after an exchange,
//! what the session answers, what a run's tick does next and how the run settles.
//!
//! [`crate::exchange`], [`crate::task`] and [`crate::native`] read the rows, ask these rules,
//! and write what they return through [`crate::custody`]; nothing here opens a database.

use crate::{Code, LineError};

/// Statuses from which nothing more is sent or adopted.
pub const TERMINAL: [&str; 7] = [
    "completed",
    "failed",
    "rejected",
    "canceled",
    "refused",
    "undelivered",
    "expired",
];

/// The JSON-RPC code of `TaskNotCancelableError` (A2A 1.0).
const NOT_CANCELABLE: i64 = -32002;

/// Whether nothing more is sent or adopted for a task in `status`.
pub fn is_terminal(status: &str) -> bool {
    TERMINAL.contains(&status)
}

/// Which exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Physical {
    /// `SendMessage`.
    Submit,
    /// `GetTask`.
    Poll,
    /// `CancelTask`.
    Cancel,
}

/// The A2A 1.0 task state as the line names it.
pub fn local_state(state: &str) -> Option<&'static str> {
    Some(match state {
        "TASK_STATE_SUBMITTED" => "submitted",
        "TASK_STATE_WORKING" => "working",
        "TASK_STATE_INPUT_REQUIRED" | "TASK_STATE_AUTH_REQUIRED" => "interrupted",
        "TASK_STATE_COMPLETED" => "completed",
        "TASK_STATE_FAILED" => "failed",
        "TASK_STATE_REJECTED" => "rejected",
        "TASK_STATE_CANCELED" => "canceled",
        _ => return None,
    })
}

/// What an authenticated response said.
#[derive(Clone, Debug, PartialEq)]
pub enum Said {
    /// A task: its id, A2A state, retained text parts, omitted parts.
    Task {
        /// The foreign task id.
        id: String,
        /// The A2A state (`TASK_STATE_*`).
        state: String,
        /// The text parts of a completed task (`{"text": ...}`).
        parts: Vec<serde_json::Value>,
        /// The parts not kept (`{"artifact", "part", "kind"}`).
        omitted: Vec<serde_json::Value>,
    },
    /// A JSON-RPC error or a non-200 status: the code.
    Refused(serde_json::Value),
}

/// A settled exchange, as the session answers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The task's status afterwards.
    pub status: String,
    /// For a cancel: `acknowledged` or `not_cancelable`.
    pub remote: &'static str,
}

/// A task as the outcome commit finds it, inside its transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The foreign task id, once one authenticated.
    pub foreign_task_id: Option<String>,
    /// The status.
    pub status: String,
    /// Whether a foreign terminal may still be adopted.
    pub adoption_open: bool,
    /// When the task stops being live.
    pub expires_at_ms: i64,
}

/// The observation an authenticated task answer records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    /// The foreign task id it names.
    pub foreign_task_id: String,
    /// Its A2A state.
    pub foreign_state: String,
    /// Whether it adopted a terminal.
    pub adopted: bool,
    /// The adopted result (`{"parts": [...]}`) of an adopted completion.
    pub result_json: Option<String>,
    /// The parts not kept, when there were any.
    pub omitted_parts_json: Option<String>,
}

/// What the outcome commit writes to the task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskWrite {
    /// Nothing.
    Nothing,
    /// A refused submit: the status `refused`.
    Refused,
    /// An authenticated task answer: the foreign id (set once), status and adoption.
    Observed {
        /// The foreign task id.
        foreign_task_id: String,
        /// The status.
        status: String,
        /// Whether adoption stays open.
        adoption_open: bool,
        /// `open`, `adoption_closed` or `adopted`.
        local_disposition: &'static str,
    },
}

/// What an authenticated answer does, written in one commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settlement {
    /// The exchange's outcome: `authenticated` or `peer_refused`.
    pub exchange_outcome: &'static str,
    /// The observation recorded, for a task answer.
    pub observation: Option<Observation>,
    /// The task's change.
    pub task: TaskWrite,
    /// The session's answer once the commit happened.
    pub answer: Result<Outcome, LineError>,
}

/// The outcome of an authenticated answer `said` to the `physical` exchange of the task
/// `task_id`, found as `found`, at `now_ms`.
///
/// - A refusal: a cancel the peer calls not cancelable (`-32002`) leaves the task as it is and
///   answers `not_cancelable`; any other refusal is `peer_refused`, and a refused submit's
///   status is `refused`.
/// - A task: it is observed. A terminal state is adopted when adoption is open and the task
///   is live (a completion keeps its text parts as the result); the status follows the peer
///   unless the task is already terminal or no longer live; the foreign id is set once.
pub fn settle(
    task_id: &str,
    found: &Found,
    physical: Physical,
    said: Said,
    now_ms: i64,
) -> Settlement {
    match said {
        Said::Refused(code) => refused(task_id, found, physical, code),
        Said::Task {
            id,
            state,
            parts,
            omitted,
        } => {
            let observed = local_state(&state).unwrap_or("unknown");
            let terminal = matches!(observed, "completed" | "failed" | "rejected" | "canceled");
            let live = now_ms < found.expires_at_ms;
            let adopt = terminal && found.adoption_open && live;
            let status = if is_terminal(&found.status) || !live {
                found.status.clone()
            } else {
                observed.to_string()
            };
            let local_disposition = match (adopt, found.adoption_open) {
                (true, _) => "adopted",
                (false, true) => "open",
                (false, false) => "adoption_closed",
            };
            let observation = Observation {
                foreign_task_id: id.clone(),
                foreign_state: state,
                adopted: adopt,
                result_json: (adopt && observed == "completed")
                    .then(|| serde_json::json!({"parts": parts}).to_string()),
                omitted_parts_json: (!omitted.is_empty())
                    .then(|| serde_json::Value::Array(omitted).to_string()),
            };
            Settlement {
                exchange_outcome: "authenticated",
                observation: Some(observation),
                task: TaskWrite::Observed {
                    foreign_task_id: found.foreign_task_id.clone().unwrap_or(id),
                    status: status.clone(),
                    adoption_open: found.adoption_open && !adopt,
                    local_disposition,
                },
                answer: Ok(Outcome {
                    status,
                    remote: "acknowledged",
                }),
            }
        }
    }
}

fn refused(
    task_id: &str,
    found: &Found,
    physical: Physical,
    code: serde_json::Value,
) -> Settlement {
    let mut settlement = Settlement {
        exchange_outcome: "peer_refused",
        observation: None,
        task: TaskWrite::Nothing,
        answer: Ok(Outcome {
            status: found.status.clone(),
            remote: "not_cancelable",
        }),
    };
    if physical == Physical::Cancel && code.as_i64() == Some(NOT_CANCELABLE) {
        return settlement;
    }
    let status = if physical == Physical::Submit {
        settlement.task = TaskWrite::Refused;
        "refused"
    } else {
        found.status.as_str()
    };
    settlement.answer = Err(LineError::new(
        Code::PeerRefused,
        "the peer refused, in a signed answer",
    )
    .with("task_id", task_id)
    .with("code", code)
    .with("status", status));
    settlement
}

/// A move of a task's status, made only from `from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// The status it moves from.
    pub from: &'static str,
    /// The status it moves to.
    pub to: &'static str,
}

/// The move of an exchange whose answer never authenticated (or never came): a submit's claim
/// is `unknown`, since its request may have reached the peer; a poll or cancel moves nothing.
pub fn unanswered(physical: Physical) -> Option<Move> {
    (physical == Physical::Submit).then_some(Move {
        from: "claimed",
        to: "unknown",
    })
}

/// The move of an exchange of which nothing reached the peer: a submit's claim is
/// `undelivered`; a poll or cancel moves nothing.
pub fn undelivered(physical: Physical) -> Option<Move> {
    (physical == Physical::Submit).then_some(Move {
        from: "claimed",
        to: "undelivered",
    })
}

/// The refusal of an exchange of which nothing reached the peer, for a task in `status`.
pub fn transport_failed(task_id: &str, physical: Physical, status: &str, why: &str) -> LineError {
    let status = undelivered(physical).map_or(status, |m| m.to);
    LineError::new(
        Code::TransportFailed,
        format!("nothing reached the peer: {why}"),
    )
    .with("task_id", task_id)
    .with("status", status)
}

/// Whether a task in `status` that outlived `task_seconds` is marked `expired` (a terminal or
/// unknown one keeps its status).
pub fn expires(status: &str) -> bool {
    !is_terminal(status) && status != "unknown"
}

/// The refusal of a task that outlived `task_seconds`.
pub fn expired(task_id: &str) -> LineError {
    LineError::new(
        Code::Expired,
        "the task outlived task_seconds: nothing more is sent or adopted",
    )
    .with("task_id", task_id)
}

/// The status `read` shows: an intent or claim whose commit was uncertain in this process is
/// `unknown`.
pub fn shown_status(status: &str, uncertain: bool) -> &str {
    if uncertain && matches!(status, "prepared" | "claimed") {
        "unknown"
    } else {
        status
    }
}

/// What a run's tick does with its task, which is not terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// The task outlived `task_seconds`: the run settles `expired`.
    Expire,
    /// One exchange: the submit of an unclaimed task, else a poll.
    Exchange(Physical),
    /// Claimed with no authenticated foreign id: never replaced, the run settles `unknown`.
    Unknown,
}

/// The step of a tick for a task in `status`, with or without a foreign id, at `now_ms`.
pub fn next_step(status: &str, has_foreign_id: bool, now_ms: i64, expires_at_ms: i64) -> Next {
    if now_ms >= expires_at_ms {
        return Next::Expire;
    }
    match (status, has_foreign_id) {
        ("prepared", _) => Next::Exchange(Physical::Submit),
        (_, true) => Next::Exchange(Physical::Poll),
        _ => Next::Unknown,
    }
}

/// Where a tick leaves its run: the status it answers and the outcome it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunStep {
    /// Whether the run settles in `status` (else it stays `awaiting_peer`).
    pub settles: bool,
    /// The run's status in the answer.
    pub status: &'static str,
    /// The outcome the answer names.
    pub outcome: &'static str,
}

/// Where a tick whose exchange failed with `code` leaves the run; `None` for a refusal that
/// is answered as it is. A failed submit settles the run (`unknown` when it may have reached
/// the peer, `failed` when it did not or the peer refused); a failed poll leaves it waiting.
pub fn after_failed_exchange(physical: Physical, code: Code) -> Option<RunStep> {
    let outcome = match code {
        Code::Unknown | Code::TransportFailed | Code::PeerRefused => code.as_str(),
        _ => return None,
    };
    Some(match physical {
        Physical::Submit => RunStep {
            settles: true,
            status: if code == Code::Unknown {
                "unknown"
            } else {
                "failed"
            },
            outcome,
        },
        Physical::Poll | Physical::Cancel => RunStep {
            settles: false,
            status: "awaiting_peer",
            outcome,
        },
    })
}

/// What a run does once its task is as a tick left it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunNext {
    /// The peer's completion was adopted: the workflow resumes once.
    Resume,
    /// The task ended otherwise: the run settles in this status.
    Settle(&'static str),
    /// The run keeps waiting for the peer.
    Wait,
}

/// The run's next step for a task in `status` with `local_disposition`.
pub fn run_next(status: &str, local_disposition: &str) -> RunNext {
    if local_disposition == "adopted" && status == "completed" {
        RunNext::Resume
    } else if status == "expired" {
        RunNext::Settle("expired")
    } else if is_terminal(status) {
        RunNext::Settle("remote_noncompletion")
    } else {
        RunNext::Wait
    }
}

/// What the peer may still hold of a cancelled run's task: `none` (never claimed), `observed`
/// (a foreign id authenticated) or `unknown` (claimed, never answered).
pub fn remote_after_cancel(status: &str, has_foreign_id: bool) -> &'static str {
    match (status, has_foreign_id) {
        ("prepared", _) => "none",
        (_, true) => "observed",
        _ => "unknown",
    }
}

/// Whether `reauthorize-run` may grant `submit` for a task in `status`: an unclaimed first
/// submit needs the public source reaffirmed; a claimed submit never answered is never
/// replaced.
pub fn reauthorize_submit(
    status: &str,
    has_foreign_id: bool,
    reaffirmed: bool,
) -> Result<(), LineError> {
    if status == "prepared" {
        if !reaffirmed {
            return Err(LineError::new(
                Code::ReaffirmRequired,
                "an unclaimed first submit needs reaffirm_public_source: true",
            ));
        }
    } else if !has_foreign_id {
        return Err(LineError::new(
            Code::UncertainSubmit,
            "the submit was claimed and never answered: it is reconciled as unknown, never \
             replaced",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(status: &str, adoption_open: bool, foreign: Option<&str>) -> Found {
        Found {
            foreign_task_id: foreign.map(str::to_string),
            status: status.to_string(),
            adoption_open,
            expires_at_ms: 1000,
        }
    }

    fn task(state: &str) -> Said {
        Said::Task {
            id: "f-1".into(),
            state: state.into(),
            parts: vec![serde_json::json!({"text": "done"})],
            omitted: Vec::new(),
        }
    }

    fn observed(s: &Settlement) -> (&str, bool, &str, &str) {
        let TaskWrite::Observed {
            foreign_task_id,
            status,
            adoption_open,
            local_disposition,
        } = &s.task
        else {
            panic!("an observed task: {s:?}")
        };
        (status, *adoption_open, local_disposition, foreign_task_id)
    }

    #[test]
    fn a_live_open_task_follows_the_peer_and_adopts_its_terminal() {
        let claimed = found("claimed", true, None);
        let working = settle(
            "t",
            &claimed,
            Physical::Submit,
            task("TASK_STATE_WORKING"),
            10,
        );
        assert_eq!(working.exchange_outcome, "authenticated");
        assert_eq!(observed(&working), ("working", true, "open", "f-1"));
        let o = working.observation.as_ref().unwrap();
        assert!(!o.adopted && o.result_json.is_none());
        assert_eq!(
            working.answer,
            Ok(Outcome {
                status: "working".into(),
                remote: "acknowledged"
            })
        );
        let done = settle(
            "t",
            &claimed,
            Physical::Poll,
            task("TASK_STATE_COMPLETED"),
            10,
        );
        assert_eq!(observed(&done), ("completed", false, "adopted", "f-1"));
        let o = done.observation.unwrap();
        assert!(o.adopted);
        assert_eq!(
            o.result_json.as_deref(),
            Some(r#"{"parts":[{"text":"done"}]}"#)
        );
        // A failure is adopted too, with no result.
        let failed = settle("t", &claimed, Physical::Poll, task("TASK_STATE_FAILED"), 10);
        assert_eq!(observed(&failed), ("failed", false, "adopted", "f-1"));
        assert_eq!(failed.observation.unwrap().result_json, None);
        // An interruption is not terminal.
        let asked = settle(
            "t",
            &claimed,
            Physical::Poll,
            task("TASK_STATE_AUTH_REQUIRED"),
            10,
        );
        assert_eq!(observed(&asked), ("interrupted", true, "open", "f-1"));
    }

    #[test]
    fn a_closed_expired_or_terminal_task_is_observed_but_not_moved() {
        let closed = found("working", false, Some("f-0"));
        let s = settle(
            "t",
            &closed,
            Physical::Cancel,
            task("TASK_STATE_CANCELED"),
            10,
        );
        // The foreign id is set once: the first one stays.
        assert_eq!(observed(&s), ("canceled", false, "adoption_closed", "f-0"));
        assert!(!s.observation.unwrap().adopted);
        let late = settle(
            "t",
            &found("working", true, None),
            Physical::Poll,
            task("TASK_STATE_COMPLETED"),
            1000,
        );
        assert_eq!(observed(&late), ("working", true, "open", "f-1"));
        assert_eq!(late.observation.unwrap().result_json, None);
        let over = found("expired", true, None);
        let s = settle("t", &over, Physical::Poll, task("TASK_STATE_COMPLETED"), 10);
        assert_eq!(observed(&s), ("expired", false, "adopted", "f-1"));
        let omitted = Said::Task {
            id: "f-1".into(),
            state: "TASK_STATE_COMPLETED".into(),
            parts: Vec::new(),
            omitted: vec![serde_json::json!({"artifact": 0, "part": 0, "kind": "url"})],
        };
        let s = settle(
            "t",
            &found("claimed", true, None),
            Physical::Poll,
            omitted,
            10,
        );
        let json = s.observation.unwrap().omitted_parts_json.unwrap();
        assert_eq!(json, r#"[{"artifact":0,"part":0,"kind":"url"}]"#);
    }

    #[test]
    fn a_refusal_is_peer_refused_except_a_cancel_that_is_not_cancelable() {
        let working = found("working", true, Some("f-1"));
        let code = serde_json::json!(-32002);
        let s = settle(
            "t",
            &working,
            Physical::Cancel,
            Said::Refused(code.clone()),
            10,
        );
        assert_eq!(s.exchange_outcome, "peer_refused");
        assert_eq!(
            (s.task.clone(), s.observation.clone()),
            (TaskWrite::Nothing, None)
        );
        assert_eq!(
            s.answer,
            Ok(Outcome {
                status: "working".into(),
                remote: "not_cancelable"
            })
        );
        let s = settle(
            "t",
            &working,
            Physical::Poll,
            Said::Refused(code.clone()),
            10,
        );
        assert_eq!(s.task, TaskWrite::Nothing);
        let e = s.answer.unwrap_err();
        assert_eq!(e.code, Code::PeerRefused);
        assert_eq!(
            e.to_json(),
            serde_json::json!({"error": "peer_refused", "task_id": "t", "code": -32002,
                               "status": "working",
                               "detail": "the peer refused, in a signed answer"})
        );
        let claimed = found("claimed", true, None);
        let s = settle(
            "t",
            &claimed,
            Physical::Submit,
            Said::Refused(503.into()),
            10,
        );
        assert_eq!(s.task, TaskWrite::Refused);
        assert_eq!(s.answer.unwrap_err().to_json()["status"], "refused");
    }

    #[test]
    fn an_unanswered_or_undelivered_submit_moves_its_claim() {
        assert_eq!(
            unanswered(Physical::Submit),
            Some(Move {
                from: "claimed",
                to: "unknown"
            })
        );
        assert_eq!(
            undelivered(Physical::Submit).map(|m| m.to),
            Some("undelivered")
        );
        for other in [Physical::Poll, Physical::Cancel] {
            assert_eq!((unanswered(other), undelivered(other)), (None, None));
        }
        let e = transport_failed("t", Physical::Submit, "claimed", "refused");
        assert_eq!(e.code, Code::TransportFailed);
        assert_eq!(e.to_json()["status"], "undelivered");
        assert_eq!(
            transport_failed("t", Physical::Poll, "working", "x").to_json()["status"],
            "working"
        );
    }

    #[test]
    fn expiry_and_the_shown_status() {
        for (status, moves) in [
            ("prepared", true),
            ("claimed", true),
            ("working", true),
            ("unknown", false),
            ("completed", false),
            ("expired", false),
        ] {
            assert_eq!(expires(status), moves, "{status}");
        }
        assert_eq!(expired("t").to_json()["task_id"], "t");
        assert_eq!(shown_status("claimed", true), "unknown");
        assert_eq!(shown_status("prepared", true), "unknown");
        assert_eq!(shown_status("working", true), "working");
        assert_eq!(shown_status("claimed", false), "claimed");
    }

    #[test]
    fn a_tick_submits_once_then_polls_and_never_replaces_a_claim() {
        use Next::*;
        assert_eq!(
            next_step("prepared", false, 0, 10),
            Exchange(Physical::Submit)
        );
        assert_eq!(next_step("working", true, 0, 10), Exchange(Physical::Poll));
        assert_eq!(next_step("claimed", false, 0, 10), Unknown);
        assert_eq!(next_step("unknown", false, 0, 10), Unknown);
        assert_eq!(next_step("prepared", false, 10, 10), Expire);
        let step = |p, c| after_failed_exchange(p, c).map(|s| (s.settles, s.status, s.outcome));
        assert_eq!(
            step(Physical::Submit, Code::Unknown),
            Some((true, "unknown", "unknown"))
        );
        assert_eq!(
            step(Physical::Submit, Code::TransportFailed),
            Some((true, "failed", "transport_failed"))
        );
        assert_eq!(
            step(Physical::Poll, Code::PeerRefused),
            Some((false, "awaiting_peer", "peer_refused"))
        );
        assert_eq!(step(Physical::Poll, Code::Revoked), None);
    }

    #[test]
    fn a_run_resumes_on_an_adopted_completion_and_settles_on_any_other_end() {
        assert_eq!(run_next("completed", "adopted"), RunNext::Resume);
        assert_eq!(
            run_next("completed", "adoption_closed"),
            RunNext::Settle("remote_noncompletion")
        );
        assert_eq!(
            run_next("failed", "adopted"),
            RunNext::Settle("remote_noncompletion")
        );
        assert_eq!(run_next("expired", "open"), RunNext::Settle("expired"));
        assert_eq!(run_next("working", "open"), RunNext::Wait);
        assert_eq!(run_next("unknown", "open"), RunNext::Wait);
        assert_eq!(remote_after_cancel("prepared", false), "none");
        assert_eq!(remote_after_cancel("working", true), "observed");
        assert_eq!(remote_after_cancel("claimed", false), "unknown");
    }

    #[test]
    fn a_submit_is_reauthorized_only_unclaimed_and_reaffirmed_or_answered() {
        assert!(reauthorize_submit("prepared", false, true).is_ok());
        assert_eq!(
            reauthorize_submit("prepared", false, false)
                .unwrap_err()
                .code,
            Code::ReaffirmRequired
        );
        assert_eq!(
            reauthorize_submit("unknown", false, true).unwrap_err().code,
            Code::UncertainSubmit
        );
        assert!(reauthorize_submit("working", true, false).is_ok());
    }
}
