//! The agent scratchpad contract (a2a-contract-v1): message privacy, time to live, project scope,
//! the task state machine, and the token-bucket arithmetic of its rate limits. Pure rules: the
//! SQLite store (`agent-intercom-scratchpad`) applies them.

use crate::error::{Error, ErrorCode};

/// Hours a message lives when the sender names none.
pub const DEFAULT_TTL_HOURS: u32 = 24;
/// Longest time to live a message may ask for: 30 days. Longer requests are refused, not
/// silently shortened.
pub const MAX_TTL_HOURS: u32 = 720;

/// Message priority, lowest first.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// Background information.
    Low = 0,
    /// The default.
    Normal = 1,
    /// Needs attention soon.
    High = 2,
    /// Needs attention now.
    Critical = 3,
}

/// Who may read a message.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Privacy {
    /// Every agent in the project scope.
    Public = 0,
    /// Members of the sender's team (same team id, same project), and the sender.
    Team = 1,
    /// The sender and the recipient only. Requires a recipient.
    Private = 2,
}

/// A task's state.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskState {
    /// Created, not yet picked up.
    Submitted = 0,
    /// Being worked on.
    Working = 1,
    /// Waiting for input from the creator.
    InputRequired = 2,
    /// Done (terminal).
    Completed = 3,
    /// Gave up (terminal).
    Failed = 4,
    /// Withdrawn by its creator (terminal).
    Canceled = 5,
    /// Declined by the assignee (terminal).
    Rejected = 6,
}

macro_rules! names {
    ($ty:ident { $($variant:ident => $name:literal),* $(,)? }) => {
        impl $ty {
            /// Every value, in order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),*];

            /// The wire name.
            pub const fn as_str(self) -> &'static str {
                match self { $($ty::$variant => $name),* }
            }

            /// The value with this wire name; `INVALID_ARGUMENT` naming the field otherwise.
            pub fn parse(name: &str, field: &str) -> Result<$ty, Error> {
                match name {
                    $($name => Ok($ty::$variant),)*
                    _ => Err(Error::new(
                        ErrorCode::InvalidArgument,
                        format!("{field} must be one of: {}", [$($name),*].join(", ")),
                    )),
                }
            }
        }
    };
}

names!(Priority { Low => "low", Normal => "normal", High => "high", Critical => "critical" });
names!(Privacy { Public => "public", Team => "team", Private => "private" });
names!(TaskState {
    Submitted => "submitted",
    Working => "working",
    InputRequired => "input-required",
    Completed => "completed",
    Failed => "failed",
    Canceled => "canceled",
    Rejected => "rejected",
});

impl TaskState {
    /// Terminal states are never left.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        )
    }
}

/// The transition table: `(from, to)` pairs that are allowed. Everything else is refused.
pub const TRANSITIONS: &[(TaskState, TaskState)] = &[
    (TaskState::Submitted, TaskState::Working),
    (TaskState::Submitted, TaskState::Rejected),
    (TaskState::Submitted, TaskState::Canceled),
    (TaskState::Working, TaskState::InputRequired),
    (TaskState::Working, TaskState::Completed),
    (TaskState::Working, TaskState::Failed),
    (TaskState::Working, TaskState::Canceled),
    (TaskState::InputRequired, TaskState::Working),
    (TaskState::InputRequired, TaskState::Failed),
    (TaskState::InputRequired, TaskState::Canceled),
];

/// Checks a transition; the error names both states.
pub fn check_transition(from: TaskState, to: TaskState) -> Result<(), Error> {
    if TRANSITIONS.contains(&(from, to)) {
        Ok(())
    } else if from.is_terminal() {
        Err(Error::new(
            ErrorCode::InvalidTransition,
            format!(
                "task is {} (terminal); it cannot become {}",
                from.as_str(),
                to.as_str()
            ),
        ))
    } else {
        Err(Error::new(
            ErrorCode::InvalidTransition,
            format!("a task cannot go from {} to {}", from.as_str(), to.as_str()),
        ))
    }
}

fn invalid_ttl() -> Error {
    Error::new(
        ErrorCode::InvalidTtl,
        format!("ttl_hours must be a whole number of hours from 1 to {MAX_TTL_HOURS}"),
    )
}

/// Validates a time to live in hours (`None` = the default).
pub fn ttl_hours(requested: Option<i64>) -> Result<u32, Error> {
    match requested {
        None => Ok(DEFAULT_TTL_HOURS),
        Some(h) if (1..=MAX_TTL_HOURS as i64).contains(&h) => Ok(h as u32),
        Some(_) => Err(invalid_ttl()),
    }
}

/// Validates a time to live given as a number that is not an integer: a whole number written as
/// a float (`24.0`, `1e300`) is checked like [`ttl_hours`]; a fraction (`0.5`) is an invalid
/// time to live, `INVALID_TTL`, never rounded.
pub fn ttl_hours_of_number(requested: f64) -> Result<u32, Error> {
    if requested.is_finite() && requested.fract() == 0.0 {
        // Saturates beyond the i64 range, which the range check then refuses.
        ttl_hours(Some(requested as i64))
    } else {
        Err(invalid_ttl())
    }
}

/// Checks a message's addressing: a private message needs a recipient, and a recipient, when
/// given, names an agent (the empty name is nobody: `INVALID_ARGUMENT` for a public or team
/// message, whose `to` would direct it to no one).
pub fn check_addressing(privacy: Privacy, to: Option<&str>) -> Result<(), Error> {
    if privacy == Privacy::Private && to.is_none_or(str::is_empty) {
        return Err(Error::new(
            ErrorCode::PrivateWithoutRecipient,
            "a private message needs a recipient (to)",
        ));
    }
    if to == Some("") {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "to must name an agent (omit it for a message to everyone in scope)",
        ));
    }
    Ok(())
}

/// What visibility needs to know of a message.
#[derive(Clone, Copy, Debug)]
pub struct MessageView<'a> {
    /// Sender.
    pub from: &'a str,
    /// Recipient, if directed.
    pub to: Option<&'a str>,
    /// Privacy level.
    pub privacy: Privacy,
    /// The sender's team id when it posted (team messages are for that team).
    pub sender_team: Option<&'a str>,
    /// Project root the message belongs to.
    pub project_root: Option<&'a str>,
    /// Expiry, milliseconds since the epoch.
    pub expires_at: i64,
}

/// What visibility needs to know of the reader.
#[derive(Clone, Copy, Debug)]
pub struct ReaderView<'a> {
    /// The reading agent.
    pub agent: &'a str,
    /// Its team id in the active project, if registered with one and a member since before the
    /// message was posted (see [`team_when_posted`]): a team joined later does not count.
    pub team: Option<&'a str>,
    /// The active project root: when set, only messages of exactly that root are visible.
    pub project_root: Option<&'a str>,
}

/// The one visibility rule, used by read, list, poll and export.
///
/// - expired messages are never visible;
/// - with an active project root, only messages with exactly that root are visible;
/// - the sender always sees its own messages;
/// - `private`: the sender and the recipient only;
/// - `team`: members of the sender's team: the team id the sender had when it posted, held by
///   the reader in the same project since before the message was posted ([`team_when_posted`]);
/// - `public`: every agent in scope.
pub fn visible(message: &MessageView<'_>, reader: &ReaderView<'_>, now_ms: i64) -> bool {
    if message.expires_at <= now_ms {
        return false;
    }
    if reader.project_root.is_some() && message.project_root != reader.project_root {
        return false;
    }
    if message.from == reader.agent {
        return true;
    }
    match message.privacy {
        Privacy::Public => true,
        Privacy::Private => message.to == Some(reader.agent),
        Privacy::Team => message.sender_team.is_some() && message.sender_team == reader.team,
    }
}

/// What the task rules need to know of a task.
#[derive(Clone, Copy, Debug)]
pub struct TaskView<'a> {
    /// Who created it.
    pub creator: &'a str,
    /// Who works on it, if anyone.
    pub assignee: Option<&'a str>,
}

/// Whether `agent` takes part in a task: it is the task's creator or its assignee (names compare
/// exactly; the empty name takes part in nothing). Only participants read a task, update it and
/// attach artifacts to it.
pub fn is_participant(task: &TaskView<'_>, agent: &str) -> bool {
    !agent.is_empty() && (agent == task.creator || task.assignee == Some(agent))
}

/// The task read rule, used by every task read (the task, its history, its artifacts, export):
/// participants only ([`is_participant`]); anyone else is `FORBIDDEN`. Task ids are not secret
/// (they travel in messages and events), their contents are.
pub fn check_task_read(task: &TaskView<'_>, agent: &str) -> Result<(), Error> {
    if is_participant(task, agent) {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::Forbidden,
            "only the task's creator and assignee may read it, its history and its artifacts",
        ))
    }
}

/// The reader's team as far as one message is concerned. A team message is for the members the
/// team had when it was posted: a reader that joined its team (at `joined_seq`, a position in the
/// store's commit sequence) at or after the message's own position `message_seq` is not one of
/// them, and neither is one that left and rejoined since. So a message that was not visible to
/// an agent when it arrived never becomes visible later.
pub fn team_when_posted(team: Option<&str>, joined_seq: i64, message_seq: i64) -> Option<&str> {
    team.filter(|_| message_seq > joined_seq)
}

/// A token bucket's state: tokens (in thousandths, to stay exact) and when it was last refilled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    /// Available tokens × 1000.
    pub milli_tokens: i64,
    /// Last refill, milliseconds since the epoch.
    pub refilled_at: i64,
}

impl Bucket {
    /// A full bucket for `per_minute` at `now_ms`.
    pub fn full(per_minute: u32, now_ms: i64) -> Bucket {
        Bucket {
            milli_tokens: per_minute as i64 * 1000,
            refilled_at: now_ms,
        }
    }

    /// The bucket refilled to `now_ms` (capacity `per_minute`, refilled evenly over a minute).
    ///
    /// Time that has not yet earned a whole milli-token is kept (the refill time advances only by
    /// the time the gained milli-tokens took), so callers polling often are not starved.
    pub fn refilled(self, per_minute: u32, now_ms: i64) -> Bucket {
        let capacity = per_minute as i64 * 1000;
        let elapsed = (now_ms - self.refilled_at).max(0);
        // per_minute tokens per 60,000 ms = per_minute milli-tokens per 60 ms.
        let gained = elapsed.saturating_mul(per_minute as i64) / 60;
        // Full (a zero rate is always "full" at zero, and must not reach the division below).
        if self.milli_tokens.saturating_add(gained) >= capacity || per_minute == 0 {
            return Bucket {
                milli_tokens: capacity,
                refilled_at: now_ms.max(self.refilled_at),
            };
        }
        // The time `gained` took, rounded up (never past now: gained * 60 / per_minute <= elapsed).
        let used = (gained * 60 + per_minute as i64 - 1) / per_minute as i64;
        Bucket {
            milli_tokens: self.milli_tokens + gained,
            refilled_at: self.refilled_at + used,
        }
    }

    /// Milliseconds from `now_ms` until one token is available (rounded up, at least 1); 0 when
    /// one is. `self` should be refilled to `now_ms` first.
    pub fn wait_ms(self, per_minute: u32, now_ms: i64) -> i64 {
        if self.milli_tokens >= 1000 {
            return 0;
        }
        if per_minute == 0 {
            // A zero rate never refills; stores refuse such limits, this keeps the math total.
            return 60_000;
        }
        let missing = 1000 - self.milli_tokens;
        // missing milli-tokens at per_minute milli-tokens per 60 ms, counted from the refill time.
        let ready_at =
            self.refilled_at + (missing * 60 + per_minute as i64 - 1) / per_minute as i64;
        (ready_at - now_ms).max(1)
    }
}

/// One bucket taken from at each of `takes` (milliseconds, starting full at the first): `Ok` when
/// a token was taken, `Err(retry_after_ms)` when refused (which consumes nothing).
pub fn simulate_takes(per_minute: u32, takes: &[i64]) -> Vec<Result<(), i64>> {
    let mut bucket: Option<Bucket> = None;
    takes
        .iter()
        .map(|&now| {
            let b = bucket
                .unwrap_or_else(|| Bucket::full(per_minute, now))
                .refilled(per_minute, now);
            match b.wait_ms(per_minute, now) {
                0 => {
                    bucket = Some(Bucket {
                        milli_tokens: b.milli_tokens - 1000,
                        ..b
                    });
                    Ok(())
                }
                wait => {
                    bucket = Some(b);
                    Err(wait)
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for p in Priority::ALL {
            assert_eq!(Priority::parse(p.as_str(), "priority").unwrap(), *p);
        }
        for s in TaskState::ALL {
            assert_eq!(TaskState::parse(s.as_str(), "state").unwrap(), *s);
        }
        let err = Privacy::parse("secret", "privacy").unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        assert_eq!(
            err.message(),
            "privacy must be one of: public, team, private"
        );
    }

    #[test]
    fn transitions_follow_the_table_and_terminal_states_are_never_left() {
        for from in TaskState::ALL {
            for to in TaskState::ALL {
                let allowed = check_transition(*from, *to).is_ok();
                assert_eq!(allowed, TRANSITIONS.contains(&(*from, *to)));
                if from.is_terminal() {
                    assert!(!allowed);
                }
                if !allowed {
                    let message = check_transition(*from, *to).unwrap_err().to_string();
                    assert!(
                        message.contains(from.as_str()) && message.contains(to.as_str()),
                        "{message}"
                    );
                }
            }
        }
    }

    #[test]
    fn terminal_states_and_the_wording_of_refusals() {
        let terminal: Vec<_> = TaskState::ALL
            .iter()
            .filter(|s| s.is_terminal())
            .map(|s| s.as_str())
            .collect();
        assert_eq!(terminal, ["completed", "failed", "canceled", "rejected"]);
        let message = |from, to| {
            check_transition(from, to)
                .unwrap_err()
                .message()
                .to_string()
        };
        assert_eq!(
            message(TaskState::Completed, TaskState::Working),
            "task is completed (terminal); it cannot become working"
        );
        assert_eq!(
            message(TaskState::Submitted, TaskState::Completed),
            "a task cannot go from submitted to completed"
        );
        assert_eq!(
            check_transition(TaskState::Rejected, TaskState::Rejected)
                .unwrap_err()
                .code(),
            ErrorCode::InvalidTransition
        );
    }

    #[test]
    fn ttl_and_addressing() {
        assert_eq!(ttl_hours(None), Ok(DEFAULT_TTL_HOURS));
        assert_eq!(ttl_hours(Some(1)), Ok(1));
        assert_eq!(ttl_hours(Some(720)), Ok(720));
        for bad in [0, -1, 721, i64::MAX] {
            assert_eq!(
                ttl_hours(Some(bad)).unwrap_err().code(),
                ErrorCode::InvalidTtl
            );
        }
        assert_eq!(ttl_hours_of_number(24.0), Ok(24));
        for bad in [0.5, 1.5, -0.0, 720.5, 1e300, f64::NAN, f64::INFINITY] {
            assert_eq!(
                ttl_hours_of_number(bad).unwrap_err().code(),
                ErrorCode::InvalidTtl,
                "{bad}"
            );
        }
        assert_eq!(
            check_addressing(Privacy::Private, None).unwrap_err().code(),
            ErrorCode::PrivateWithoutRecipient
        );
        assert_eq!(
            check_addressing(Privacy::Private, Some(""))
                .unwrap_err()
                .code(),
            ErrorCode::PrivateWithoutRecipient
        );
        assert!(check_addressing(Privacy::Private, Some("b")).is_ok());
        assert!(check_addressing(Privacy::Public, None).is_ok());
        assert_eq!(
            check_addressing(Privacy::Public, Some(""))
                .unwrap_err()
                .code(),
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn a_team_joined_after_a_message_does_not_count_for_it() {
        assert_eq!(team_when_posted(Some("red"), 4, 5), Some("red"));
        assert_eq!(team_when_posted(Some("red"), 5, 5), None);
        assert_eq!(team_when_posted(Some("red"), 9, 5), None);
        assert_eq!(team_when_posted(None, 0, 5), None);
    }

    #[test]
    fn only_participants_read_a_task() {
        let task = TaskView {
            creator: "c",
            assignee: Some("w"),
        };
        assert!(check_task_read(&task, "c").is_ok());
        assert!(check_task_read(&task, "w").is_ok());
        for outsider in ["x", "", "C", "w "] {
            assert_eq!(
                check_task_read(&task, outsider).unwrap_err().code(),
                ErrorCode::Forbidden,
                "{outsider:?}"
            );
        }
        let unassigned = TaskView {
            creator: "c",
            assignee: Some(""),
        };
        assert!(!is_participant(&unassigned, ""));
    }

    #[test]
    fn buckets_refill_and_report_waits_rounded_up() {
        let b = Bucket::full(60, 0); // one token per second
        assert_eq!(b.milli_tokens, 60_000);
        let empty = Bucket {
            milli_tokens: 0,
            refilled_at: 0,
        };
        assert_eq!(empty.wait_ms(60, 0), 1000);
        assert_eq!(empty.refilled(60, 500).milli_tokens, 500);
        assert_eq!(empty.refilled(60, 500).wait_ms(60, 500), 500);
        let almost = Bucket {
            milli_tokens: 999,
            refilled_at: 0,
        };
        assert_eq!(almost.wait_ms(60, 0), 1, "never 0 while refused");
        assert_eq!(empty.wait_ms(7, 0), 8572); // 60000/7 rounded up
        assert_eq!(
            empty.refilled(60, 10_000_000).milli_tokens,
            60_000,
            "capped"
        );
    }

    #[test]
    fn frequent_polling_does_not_lose_refill_time() {
        // 2 per minute: one milli-token per 30 ms. Polling every millisecond must still refill.
        let mut b = Bucket {
            milli_tokens: 0,
            refilled_at: 0,
        };
        for now in 1..=30_000 {
            b = b.refilled(2, now);
        }
        assert_eq!(b.milli_tokens, 1000);
        assert_eq!(b.wait_ms(2, 30_000), 0);
        let b = Bucket {
            milli_tokens: 0,
            refilled_at: 0,
        }
        .refilled(2, 29);
        assert_eq!(
            b.wait_ms(2, 29),
            29_971,
            "the wait counts the time already accrued"
        );
    }
}

mod redact;
pub use redact::redact;
