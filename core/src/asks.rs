//! Ask threading: the rules a send obeys when it expects a reply (an *ask*) or answers one
//! (`replyTo`). Pure rules over a view of the open asks; the broker keeps the asks, their
//! timers and their persistence, and applies the decision.
//!
//! An open ask (an *edge*) is keyed by (asker, message id) and names the asked session. Its
//! state is blocking while the asker waits for the reply, deferred once the ask was set aside
//! (`defer_ask`, the asker left with `preserveAsks`, the broker restarted). At most one edge is
//! open per ordered pair (asker, asked): [`ASK_ALREADY_PENDING`] keeps it so.
//!
//! ```
//! use agent_intercom_core::asks::{self, AskEdge, AskRefusal, AskState};
//!
//! let open = [AskEdge { asker: "b", message_id: "q1", asked: "a", state: AskState::Blocking }];
//! // a may not ask b back while b waits for a's reply ...
//! let refused = asks::check_ask(&open[..], "a", "b", None, true, 64);
//! assert_eq!(refused, Err(AskRefusal::MutualAsk));
//! // ... but may answer it, which resolves b's ask once the reply is delivered.
//! let effect = asks::check_ask(&open[..], "a", "b", Some("q1"), false, 64).unwrap();
//! assert_eq!(effect.resolves.map(|k| k.message_id), Some("q1"));
//! assert!(!effect.opens);
//! ```

use std::fmt;

/// `delivery_failed` code: `replyTo` names no open ask of the recipient to the sender.
pub const INVALID_REPLY_TARGET: &str = "INVALID_REPLY_TARGET";
/// `delivery_failed` code: the sender already has an open ask to the recipient.
pub const ASK_ALREADY_PENDING: &str = "ASK_ALREADY_PENDING";
/// `delivery_failed` code: the recipient is blocked waiting for the sender's reply.
pub const MUTUAL_ASK: &str = "MUTUAL_ASK";
/// `delivery_failed` code: the sender has as many open asks as it may.
pub const TOO_MANY_PENDING_ASKS: &str = "TOO_MANY_PENDING_ASKS";

/// Whether the asker still waits for the reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AskState {
    /// The asker waits: the asked session may not ask it back ([`MUTUAL_ASK`]).
    Blocking,
    /// Set aside: still answerable and still counted, but no longer blocks an ask back.
    Deferred,
}

impl AskState {
    /// The name stored and sent (`blocking`, `deferred`).
    pub const fn as_str(self) -> &'static str {
        match self {
            AskState::Blocking => "blocking",
            AskState::Deferred => "deferred",
        }
    }

    /// The state with this name.
    pub fn parse(name: &str) -> Option<AskState> {
        match name {
            "blocking" => Some(AskState::Blocking),
            "deferred" => Some(AskState::Deferred),
            _ => None,
        }
    }
}

/// One open ask: `asker` sent `message_id` to `asked` expecting a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AskEdge<'a> {
    /// The session waiting for the reply.
    pub asker: &'a str,
    /// The ask's message id (what a reply names as `replyTo`).
    pub message_id: &'a str,
    /// The session asked.
    pub asked: &'a str,
    /// Blocking or deferred.
    pub state: AskState,
}

/// The open asks, as the rules need to see them. The broker implements it over its indexes;
/// a slice of [`AskEdge`] implements it by scanning (tests, vectors, bindings).
pub trait AskView {
    /// The ask `asker` opened with `message_id`.
    fn by_message(&self, asker: &str, message_id: &str) -> Option<AskEdge<'_>>;
    /// The ask `asker` has open to `asked` (at most one).
    fn between(&self, asker: &str, asked: &str) -> Option<AskEdge<'_>>;
    /// How many asks `asker` has open, blocking or deferred.
    fn open_from(&self, asker: &str) -> usize;
}

impl AskView for [AskEdge<'_>] {
    fn by_message(&self, asker: &str, message_id: &str) -> Option<AskEdge<'_>> {
        self.iter()
            .find(|e| e.asker == asker && e.message_id == message_id)
            .copied()
    }

    fn between(&self, asker: &str, asked: &str) -> Option<AskEdge<'_>> {
        self.iter()
            .find(|e| e.asker == asker && e.asked == asked)
            .copied()
    }

    fn open_from(&self, asker: &str) -> usize {
        self.iter().filter(|e| e.asker == asker).count()
    }
}

/// Names an open ask: (asker, message id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AskKey<'a> {
    /// The session waiting for the reply.
    pub asker: &'a str,
    /// The ask's message id.
    pub message_id: &'a str,
}

/// What an accepted send does to the open asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AskEffect<'a> {
    /// The ask this message answers. It is resolved when the reply is delivered (acknowledged
    /// by its recipient), not when it is sent: a reply that fails leaves the ask open.
    pub resolves: Option<AskKey<'a>>,
    /// The message opens a blocking ask from the sender to the recipient, keyed by its own
    /// message id.
    pub opens: bool,
}

/// Why a send is refused by the ask rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AskRefusal {
    /// [`INVALID_REPLY_TARGET`].
    InvalidReplyTarget,
    /// [`ASK_ALREADY_PENDING`].
    AskAlreadyPending,
    /// [`MUTUAL_ASK`].
    MutualAsk,
    /// [`TOO_MANY_PENDING_ASKS`].
    TooManyPendingAsks,
}

// A free constant, not an associated one: cbindgen reads core and would export an associated
// constant into the C header.
const ALL_REFUSALS: [AskRefusal; 4] = [
    AskRefusal::InvalidReplyTarget,
    AskRefusal::AskAlreadyPending,
    AskRefusal::MutualAsk,
    AskRefusal::TooManyPendingAsks,
];

impl AskRefusal {
    /// Every refusal, in the order [`check_ask`] tries them.
    pub const fn all() -> [AskRefusal; 4] {
        ALL_REFUSALS
    }

    /// The `delivery_failed` code.
    pub const fn code(self) -> &'static str {
        match self {
            AskRefusal::InvalidReplyTarget => INVALID_REPLY_TARGET,
            AskRefusal::AskAlreadyPending => ASK_ALREADY_PENDING,
            AskRefusal::MutualAsk => MUTUAL_ASK,
            AskRefusal::TooManyPendingAsks => TOO_MANY_PENDING_ASKS,
        }
    }

    /// The `delivery_failed` reason, as the adapters show it.
    pub const fn reason(self) -> &'static str {
        match self {
            AskRefusal::InvalidReplyTarget => "Reply target does not match a pending ask",
            AskRefusal::AskAlreadyPending => {
                "Another ask to this session is still unresolved. Wait for its reply or send a non-blocking follow-up."
            }
            AskRefusal::MutualAsk => {
                "Mutual ask refused: target session is already waiting for a reply from this session."
            }
            AskRefusal::TooManyPendingAsks => "Too many asks are already waiting for replies",
        }
    }

    /// The refusal with this code.
    pub fn from_code(code: &str) -> Option<AskRefusal> {
        ALL_REFUSALS.into_iter().find(|r| r.code() == code)
    }
}

impl fmt::Display for AskRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code(), self.reason())
    }
}

/// Decides a send from `from` to the resolved session `to`, which may answer an ask
/// (`reply_to`) and may itself be an ask (`expects_reply`). `max_open_asks` is how many asks a
/// session may have open.
///
/// The rules, in this order (the first that applies refuses):
/// 1. a `reply_to` must name an open ask (blocking or deferred) of `to` to `from`, else
///    [`INVALID_REPLY_TARGET`], whether or not the message is also an ask;
/// 2. an ask may not go where `from` already has one open (blocking or deferred):
///    [`ASK_ALREADY_PENDING`];
/// 3. an ask may not go to a session blocked waiting for `from`'s reply, unless it is that
///    reply: [`MUTUAL_ASK`];
/// 4. an ask may not exceed `max_open_asks` open asks of `from`, deferred ones included:
///    [`TOO_MANY_PENDING_ASKS`].
///
/// A message that is not an ask is refused by rule 1 only.
pub fn check_ask<'a, V: AskView + ?Sized>(
    view: &V,
    from: &'a str,
    to: &'a str,
    reply_to: Option<&'a str>,
    expects_reply: bool,
    max_open_asks: usize,
) -> Result<AskEffect<'a>, AskRefusal> {
    let resolves = match reply_to {
        None => None,
        Some(message_id) => match view.by_message(to, message_id) {
            Some(edge) if edge.asked == from => Some(AskKey {
                asker: to,
                message_id,
            }),
            _ => return Err(AskRefusal::InvalidReplyTarget),
        },
    };
    if expects_reply {
        if view.between(from, to).is_some() {
            return Err(AskRefusal::AskAlreadyPending);
        }
        if let Some(reverse) = view.between(to, from)
            && reverse.state == AskState::Blocking
            && reply_to != Some(reverse.message_id)
        {
            return Err(AskRefusal::MutualAsk);
        }
        if view.open_from(from) >= max_open_asks {
            return Err(AskRefusal::TooManyPendingAsks);
        }
    }
    Ok(AskEffect {
        resolves,
        opens: expects_reply,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge<'a>(
        asker: &'a str,
        message_id: &'a str,
        asked: &'a str,
        blocking: bool,
    ) -> AskEdge<'a> {
        AskEdge {
            asker,
            message_id,
            asked,
            state: if blocking {
                AskState::Blocking
            } else {
                AskState::Deferred
            },
        }
    }

    #[test]
    fn codes_and_state_names_round_trip() {
        for refusal in AskRefusal::all() {
            assert_eq!(AskRefusal::from_code(refusal.code()), Some(refusal));
            assert!(refusal.to_string().starts_with(refusal.code()));
        }
        assert_eq!(AskRefusal::from_code("SESSION_NOT_FOUND"), None);
        for state in [AskState::Blocking, AskState::Deferred] {
            assert_eq!(AskState::parse(state.as_str()), Some(state));
        }
    }

    #[test]
    fn a_plain_message_touches_no_ask() {
        let open = [edge("a", "q", "b", true)];
        let effect = check_ask(&open[..], "a", "b", None, false, 0).unwrap();
        assert_eq!(
            effect,
            AskEffect {
                resolves: None,
                opens: false
            }
        );
    }

    #[test]
    fn an_answer_that_asks_back_is_not_a_mutual_ask() {
        let open = [edge("b", "q", "a", true)];
        let effect = check_ask(&open[..], "a", "b", Some("q"), true, 64).unwrap();
        assert!(effect.opens);
        assert_eq!(
            effect.resolves,
            Some(AskKey {
                asker: "b",
                message_id: "q"
            })
        );
    }

    #[test]
    fn a_reply_check_comes_before_every_ask_check() {
        let open = [edge("a", "q", "b", true), edge("b", "r", "a", true)];
        assert_eq!(
            check_ask(&open[..], "a", "b", Some("nope"), true, 0),
            Err(AskRefusal::InvalidReplyTarget)
        );
    }
}
