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

use std::collections::HashSet;
use std::fmt;

use crate::canonical::{self, Value};
use crate::error::{Error, ErrorCode};

/// `delivery_failed` code: `replyTo` names no open ask of the recipient to the sender.
pub const INVALID_REPLY_TARGET: &str = "INVALID_REPLY_TARGET";
/// `delivery_failed` code: the sender already has an open ask to the recipient.
pub const ASK_ALREADY_PENDING: &str = "ASK_ALREADY_PENDING";
/// `delivery_failed` code: the recipient is blocked waiting for the sender's reply.
pub const MUTUAL_ASK: &str = "MUTUAL_ASK";
/// `delivery_failed` code: the sender has as many open asks as it may.
pub const TOO_MANY_PENDING_ASKS: &str = "TOO_MANY_PENDING_ASKS";

/// Why an ask ended without a reply: the `reason` of an `ask_cancelled` frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelReason {
    /// The asker cancelled it (or unregistered without `preserveAsks`).
    Cancelled,
    /// It reached the ask timeout.
    Expired,
    /// The ask message itself could not be delivered.
    DeliveryFailed,
    /// The asker's or the asked session's connection closed.
    SessionDisconnected,
    /// Remote access was revoked for a party of the ask (brokers with remote access).
    AuthorizationRevoked,
}

impl CancelReason {
    /// Every reason, in the order the wire documents them.
    pub const fn all() -> [CancelReason; 5] {
        [
            CancelReason::Cancelled,
            CancelReason::Expired,
            CancelReason::DeliveryFailed,
            CancelReason::SessionDisconnected,
            CancelReason::AuthorizationRevoked,
        ]
    }

    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            CancelReason::Cancelled => "cancelled",
            CancelReason::Expired => "expired",
            CancelReason::DeliveryFailed => "delivery_failed",
            CancelReason::SessionDisconnected => "session_disconnected",
            CancelReason::AuthorizationRevoked => "authorization_revoked",
        }
    }
}

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
                concat!(
                    "Another ask to this session is still unresolved. ",
                    "Wait for its reply or use intercom_send for a non-blocking follow-up."
                )
            }
            AskRefusal::MutualAsk => {
                concat!(
                    "Mutual ask refused: target session is already waiting for a reply from ",
                    "this session."
                )
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

/// The keys of a [`check_ask_json`] input, of its `send` and of each of its `edges`.
const INPUT_KEYS: [&str; 3] = ["edges", "send", "maxOpenAsks"];
const SEND_KEYS: [&str; 4] = ["from", "to", "replyTo", "expectsReply"];
const EDGE_KEYS: [&str; 4] = ["asker", "messageId", "asked", "state"];

/// [`check_ask`] over JSON text in the shape of a case of `vectors/asks-v1.json` (its id, kind
/// and expectation left out):
///
/// ```json
/// {"edges": [{"asker": "b", "messageId": "q1", "asked": "a", "state": "blocking"}],
///  "send": {"from": "a", "to": "b", "replyTo": "q1", "expectsReply": false},
///  "maxOpenAsks": 64}
/// ```
///
/// `replyTo` may be null or absent (no reply) and `expectsReply` absent (false). The answer is
/// canonical JSON in the shape of the case's `expected`: `{"refused":"CODE"}`, or
/// `{"opens":bool,"resolves":{"asker":..,"messageId":..}|null}`. A refusal is an answer, not an
/// error. Errors are for text that is not such an input: the [`canonical::parse`] codes,
/// [`ErrorCode::UnknownKey`] for a key the shape does not have, [`ErrorCode::InvalidArgument`]
/// for a missing or mistyped value, or for two edges with the same (asker, messageId) or the
/// same (asker, asked) pair, which no broker holds.
///
/// The one reader of this shape: the Rust vector runner, the C export `aic_check_ask_json` and
/// the Node addon all call it, so C and Node run the same vectors without parsing them again.
///
/// ```
/// use agent_intercom_core::asks::check_ask_json;
///
/// let open = r#"{"asker":"b","messageId":"q1","asked":"a","state":"blocking"}"#;
/// let ask_back = format!(concat!(
///     r#"{{"edges":[{open}],"send":{{"from":"a","to":"b","expectsReply":true}},"#,
///     r#""maxOpenAsks":64}}"#
/// ), open = open);
/// assert_eq!(check_ask_json(&ask_back).unwrap(), r#"{"refused":"MUTUAL_ASK"}"#);
/// let answer = format!(
///     r#"{{"edges":[{open}],"send":{{"from":"a","to":"b","replyTo":"q1"}},"maxOpenAsks":64}}"#
/// );
/// assert_eq!(
///     check_ask_json(&answer).unwrap(),
///     r#"{"opens":false,"resolves":{"asker":"b","messageId":"q1"}}"#
/// );
/// ```
pub fn check_ask_json(text: &str) -> Result<String, Error> {
    let input = canonical::parse(text)?;
    object(&input, "the input", &INPUT_KEYS)?;
    let edges = input
        .get("edges")
        .ok_or_else(|| bad("edges is required"))?
        .as_array()
        .ok_or_else(|| bad("edges must be an array"))?
        .iter()
        .enumerate()
        .map(|(i, edge)| parse_edge(edge, i))
        .collect::<Result<Vec<_>, _>>()?;
    let (mut keys, mut pairs) = (HashSet::new(), HashSet::new());
    for (i, edge) in edges.iter().enumerate() {
        if !keys.insert((edge.asker, edge.message_id)) {
            return Err(bad(format!(
                "edges[{i}] repeats the (asker, messageId) of an earlier edge"
            )));
        }
        if !pairs.insert((edge.asker, edge.asked)) {
            return Err(bad(format!(
                "edges[{i}] repeats the (asker, asked) pair of an earlier edge: \
                 at most one ask is open per pair"
            )));
        }
    }
    let send = input.get("send").ok_or_else(|| bad("send is required"))?;
    object(send, "send", &SEND_KEYS)?;
    let reply_to = match send.get("replyTo") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(&**id),
        Some(_) => return Err(bad("send.replyTo must be a string or null")),
    };
    let expects_reply = match send.get("expectsReply") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(bad("send.expectsReply must be a boolean")),
    };
    let max_open_asks = match input.get("maxOpenAsks") {
        Some(Value::Int(n)) => {
            usize::try_from(*n).map_err(|_| bad("maxOpenAsks must not be negative"))?
        }
        Some(_) => return Err(bad("maxOpenAsks must be an integer")),
        None => return Err(bad("maxOpenAsks is required")),
    };
    let answer = match check_ask(
        &edges[..],
        string(send, "from", "send")?,
        string(send, "to", "send")?,
        reply_to,
        expects_reply,
        max_open_asks,
    ) {
        Err(refusal) => Value::Object(vec![(
            "refused".into(),
            Value::String(refusal.code().into()),
        )]),
        Ok(effect) => Value::Object(vec![
            ("opens".into(), Value::Bool(effect.opens)),
            (
                "resolves".into(),
                effect.resolves.map_or(Value::Null, |key| {
                    Value::Object(vec![
                        ("asker".into(), Value::String(key.asker.into())),
                        ("messageId".into(), Value::String(key.message_id.into())),
                    ])
                }),
            ),
        ]),
    };
    canonical::canonical_json(&answer)
}

fn bad(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

/// Checks that `value` is an object holding only `known` keys.
fn object(value: &Value<'_>, at: &str, known: &[&str]) -> Result<(), Error> {
    let Value::Object(members) = value else {
        return Err(bad(format!("{at} must be an object")));
    };
    match members.iter().find(|(key, _)| !known.contains(&&**key)) {
        None => Ok(()),
        Some((key, _)) => Err(Error::new(
            ErrorCode::UnknownKey,
            format!("{at} does not take {key:?}; it takes: {}", known.join(", ")),
        )),
    }
}

fn string<'v>(value: &'v Value<'_>, key: &str, at: &str) -> Result<&'v str, Error> {
    match value.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(bad(format!("{at}.{key} must be a string"))),
        None => Err(bad(format!("{at}.{key} is required"))),
    }
}

fn parse_edge<'v>(edge: &'v Value<'_>, i: usize) -> Result<AskEdge<'v>, Error> {
    let at = format!("edges[{i}]");
    object(edge, &at, &EDGE_KEYS)?;
    let state = string(edge, "state", &at)?;
    Ok(AskEdge {
        asker: string(edge, "asker", &at)?,
        message_id: string(edge, "messageId", &at)?,
        asked: string(edge, "asked", &at)?,
        state: AskState::parse(state)
            .ok_or_else(|| bad(format!("{at}.state must be \"blocking\" or \"deferred\"")))?,
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
    fn cancel_reasons_and_refusal_texts_are_the_wire_ones() {
        let spellings = CancelReason::all().map(CancelReason::as_str);
        assert_eq!(
            spellings,
            [
                "cancelled",
                "expired",
                "delivery_failed",
                "session_disconnected",
                "authorization_revoked",
            ]
        );
        // The `delivery_failed` texts the adapters show; the TypeScript broker sends the same.
        let texts = AskRefusal::all().map(|r| r.to_string());
        assert_eq!(
            texts,
            [
                "INVALID_REPLY_TARGET: Reply target does not match a pending ask",
                concat!(
                    "ASK_ALREADY_PENDING: Another ask to this session is still unresolved. ",
                    "Wait for its reply or use intercom_send for a non-blocking follow-up."
                ),
                concat!(
                    "MUTUAL_ASK: Mutual ask refused: target session is already waiting for a ",
                    "reply from this session."
                ),
                "TOO_MANY_PENDING_ASKS: Too many asks are already waiting for replies",
            ]
        );
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

    #[test]
    fn check_ask_json_refuses_what_is_not_an_input() {
        let edge = r#"{"asker":"a","messageId":"q","asked":"b","state":"blocking"}"#;
        let send = r#"{"from":"a","to":"b"}"#;
        let input = |edges: &str, send: &str, max: &str| {
            format!(r#"{{"edges":[{edges}],"send":{send},"maxOpenAsks":{max}}}"#)
        };
        assert_eq!(
            check_ask_json(&input(edge, send, "0")).unwrap(),
            r#"{"opens":false,"resolves":null}"#
        );
        let cases = [
            ("{", ErrorCode::InvalidJson, "$"),
            (
                "[]",
                ErrorCode::InvalidArgument,
                "the input must be an object",
            ),
            (
                r#"{"edges":[],"send":{"from":"a","to":"b"},"maxOpenAsks":1,"expected":{}}"#,
                ErrorCode::UnknownKey,
                "the input does not take \"expected\"",
            ),
            (
                &input(edge, r#"{"from":"a","to":"b","expects_reply":true}"#, "1"),
                ErrorCode::UnknownKey,
                "send does not take \"expects_reply\"",
            ),
            (
                &input(
                    r#"{"asker":"a","messageId":"q","asked":"b","state":"open"}"#,
                    send,
                    "1",
                ),
                ErrorCode::InvalidArgument,
                "edges[0].state must be",
            ),
            (
                &input(r#"{"asker":"a","asked":"b","state":"blocking"}"#, send, "1"),
                ErrorCode::InvalidArgument,
                "edges[0].messageId is required",
            ),
            (
                &input(
                    &format!("{edge},{}", edge.replace("\"q\"", "\"r\"")),
                    send,
                    "1",
                ),
                ErrorCode::InvalidArgument,
                "edges[1] repeats the (asker, asked) pair",
            ),
            (
                &input(
                    &format!("{edge},{}", edge.replace("\"b\"", "\"c\"")),
                    send,
                    "1",
                ),
                ErrorCode::InvalidArgument,
                "edges[1] repeats the (asker, messageId)",
            ),
            (
                &input(edge, r#"{"to":"b"}"#, "1"),
                ErrorCode::InvalidArgument,
                "send.from is required",
            ),
            (
                &input(edge, r#"{"from":"a","to":"b","replyTo":1}"#, "1"),
                ErrorCode::InvalidArgument,
                "send.replyTo must be a string or null",
            ),
            (
                &input(edge, r#"{"from":"a","to":"b","expectsReply":null}"#, "1"),
                ErrorCode::InvalidArgument,
                "send.expectsReply must be a boolean",
            ),
            (
                &input(edge, send, "-1"),
                ErrorCode::InvalidArgument,
                "maxOpenAsks must not be negative",
            ),
            (&input(edge, send, "1.5"), ErrorCode::UnsupportedNumber, "$"),
            (
                r#"{"edges":{},"send":{},"maxOpenAsks":1}"#,
                ErrorCode::InvalidArgument,
                "edges must be an array",
            ),
        ];
        for (text, code, start) in cases {
            let err = check_ask_json(text).unwrap_err();
            assert_eq!(err.code(), code, "{text}: {err}");
            assert!(err.message().starts_with(start), "{text}: {err}");
        }
    }
}
