//! Routing and visibility rules: who can see whom, who hears which lifecycle event, how a
//! `send.to` selector resolves, and how a session-id replacement is ordered.
//!
//! All functions are pure: they take the broker's view of sessions as a slice of [`Session`]
//! and answer with indices into that slice, in slice order.

use crate::scope::{Scope, same_scope};

/// The routing-relevant part of a live session record (never sent over the wire as is: the
/// scope stays private to the broker).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Session<'a> {
    /// Full session id, unique among live sessions.
    pub id: &'a str,
    /// Display name; several sessions may share one.
    pub name: Option<&'a str>,
    /// The session's scope; `None` is the unscoped group.
    pub scope: Scope<'a>,
}

/// How a selector resolved.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResolveKind {
    /// The selector is a live session's full id, in any scope.
    GlobalExactId = 1,
    /// The selector is the exact (case-sensitive) name of one session in the actor's scope.
    SameScopeName = 2,
    /// The selector is a prefix of exactly one session id in the actor's scope.
    SameScopePrefix = 3,
    /// Several sessions matched at the first step that matched anything.
    AmbiguousTarget = 4,
    /// Nothing matched.
    SessionNotFound = 5,
}

impl ResolveKind {
    /// The outcome name used by the acceptance vectors and the wire's failure codes.
    pub const fn as_str(self) -> &'static str {
        match self {
            ResolveKind::GlobalExactId => "global_exact_id",
            ResolveKind::SameScopeName => "same_scope_name",
            ResolveKind::SameScopePrefix => "same_scope_prefix",
            ResolveKind::AmbiguousTarget => "AMBIGUOUS_TARGET",
            ResolveKind::SessionNotFound => "SESSION_NOT_FOUND",
        }
    }

    /// True for the three kinds that name exactly one target.
    pub const fn is_resolved(self) -> bool {
        matches!(
            self,
            ResolveKind::GlobalExactId | ResolveKind::SameScopeName | ResolveKind::SameScopePrefix
        )
    }
}

/// The result of [`resolve_target`]: the kind, and the matching candidates (one when resolved,
/// the candidates when ambiguous, none when not found), as indices in input order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolution {
    /// How the selector resolved.
    pub kind: ResolveKind,
    /// Indices into the candidate slice, ascending.
    pub matches: Vec<usize>,
}

/// Resolves a `send.to` selector for an actor in `actor_scope`.
///
/// 1. a session whose full id equals the selector, in any scope (a full id wins over a name
///    equal to it);
/// 2. sessions in the actor's scope whose name equals the selector exactly. Names compare
///    case-sensitively, as the protocol-v4 design says (the old TypeScript broker folded case);
/// 3. sessions in the actor's scope whose id starts with the selector.
///
/// The first step with any match decides: one match resolves, several give
/// [`ResolveKind::AmbiguousTarget`] with every match. An empty selector matches nothing.
pub fn resolve_target(
    actor_scope: Scope<'_>,
    selector: &str,
    candidates: &[Session<'_>],
) -> Resolution {
    let exact = indices(candidates, |s| s.id == selector);
    let same_scope_sessions = candidates
        .iter()
        .enumerate()
        .filter(|(_, s)| same_scope(s.scope, actor_scope))
        .map(|(i, s)| (i, s.id, s.name));
    let (kind, matches) = resolve_with(selector, exact, same_scope_sessions);
    Resolution { kind, matches }
}

/// [`resolve_target`] for callers that keep sessions indexed (a broker): `exact` holds the keys of
/// the sessions whose full id equals the selector (found by a map lookup, any scope), and
/// `same_scope_sessions` yields `(key, id, name)` for every session in the actor's scope. The
/// same three steps and the same outcomes; only the scan is the caller's.
pub fn resolve_with<'s, K, I>(
    selector: &str,
    exact: Vec<K>,
    same_scope_sessions: I,
) -> (ResolveKind, Vec<K>)
where
    I: Iterator<Item = (K, &'s str, Option<&'s str>)> + Clone,
{
    if selector.is_empty() {
        return (ResolveKind::SessionNotFound, Vec::new());
    }
    let decide = |kind: ResolveKind, matches: Vec<K>| match matches.len() {
        0 => None,
        1 => Some((kind, matches)),
        _ => Some((ResolveKind::AmbiguousTarget, matches)),
    };
    if let Some(found) = decide(ResolveKind::GlobalExactId, exact) {
        return found;
    }
    let by_name = same_scope_sessions
        .clone()
        .filter(|(_, _, name)| *name == Some(selector))
        .map(|(k, _, _)| k)
        .collect();
    if let Some(found) = decide(ResolveKind::SameScopeName, by_name) {
        return found;
    }
    let by_prefix = same_scope_sessions
        .filter(|(_, id, _)| id.starts_with(selector))
        .map(|(k, _, _)| k)
        .collect();
    decide(ResolveKind::SameScopePrefix, by_prefix)
        .unwrap_or((ResolveKind::SessionNotFound, Vec::new()))
}

/// Whether a `list` from `actor_id` in `actor_scope` shows the candidate.
pub fn lists(actor_id: &str, actor_scope: Scope<'_>, candidate: &Session<'_>) -> bool {
    candidate.id == actor_id || same_scope(candidate.scope, actor_scope)
}

/// Whether the candidate hears a lifecycle event about the subject.
pub fn hears(subject_id: &str, subject_scope: Scope<'_>, candidate: &Session<'_>) -> bool {
    candidate.id != subject_id && same_scope(candidate.scope, subject_scope)
}

/// The sessions a `list` request from `actor_id` in `actor_scope` returns: the actor itself
/// plus every session in the same scope.
pub fn list_visible(
    actor_id: &str,
    actor_scope: Scope<'_>,
    candidates: &[Session<'_>],
) -> Vec<usize> {
    indices(candidates, |s| lists(actor_id, actor_scope, s))
}

/// A lifecycle broadcast.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AudienceEvent {
    /// `session_joined`.
    SessionJoined = 1,
    /// `session_left`.
    SessionLeft = 2,
    /// `presence_update`.
    PresenceUpdate = 3,
}

// A function, not an associated const: cbindgen would copy the const into the C header.
const ALL_EVENTS: [AudienceEvent; 3] = [
    AudienceEvent::SessionJoined,
    AudienceEvent::SessionLeft,
    AudienceEvent::PresenceUpdate,
];

impl AudienceEvent {
    /// Every event, in numeric order.
    pub const fn all() -> [AudienceEvent; 3] {
        ALL_EVENTS
    }

    /// The event's wire and vector name.
    pub const fn as_str(self) -> &'static str {
        match self {
            AudienceEvent::SessionJoined => "session_joined",
            AudienceEvent::SessionLeft => "session_left",
            AudienceEvent::PresenceUpdate => "presence_update",
        }
    }

    /// The event with this wire name.
    pub fn from_name(name: &str) -> Option<AudienceEvent> {
        ALL_EVENTS.into_iter().find(|e| e.as_str() == name)
    }
}

/// Who receives `event` about the subject: every session in the subject's scope except the
/// subject itself. The rule is the same for the three events; the parameter documents intent.
pub fn audience(
    _event: AudienceEvent,
    subject_id: &str,
    subject_scope: Scope<'_>,
    candidates: &[Session<'_>],
) -> Vec<usize> {
    indices(candidates, |s| hears(subject_id, subject_scope, s))
}

/// Applies an adapter's filter to a computed set: the result holds only members of `base`
/// that the filter kept, in `base` order. Anything the filter adds is ignored, so a filter can
/// narrow a set but never widen it.
pub fn narrow<'a, T: PartialEq>(base: &'a [T], kept: &[T]) -> Vec<&'a T> {
    base.iter().filter(|item| kept.contains(item)).collect()
}

/// Whether a replacement moved the session between scopes.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReplacementKind {
    /// Old and new scope differ: `left` goes to the old scope strictly before `joined` goes to
    /// the new one.
    OldLeftBeforeNewJoined = 1,
    /// Same scope: its audience still sees `left` before `joined`.
    SameScopeLeftBeforeJoined = 2,
}

impl ReplacementKind {
    /// The vector outcome name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ReplacementKind::OldLeftBeforeNewJoined => "old_left_before_new_joined",
            ReplacementKind::SameScopeLeftBeforeJoined => "same_scope_left_before_joined",
        }
    }
}

/// A lifecycle event kind in a replacement plan.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LifecycleKind {
    /// `session_left`, sent to the old scope's audience.
    Left = 1,
    /// `session_joined`, sent to the new scope's audience.
    Joined = 2,
}

impl LifecycleKind {
    /// `left` or `joined`.
    pub const fn as_str(self) -> &'static str {
        match self {
            LifecycleKind::Left => "left",
            LifecycleKind::Joined => "joined",
        }
    }
}

/// One event of a replacement, addressed to the audience of `scope`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LifecycleEvent<'a> {
    /// Left or joined.
    pub kind: LifecycleKind,
    /// The replaced session id.
    pub session_id: &'a str,
    /// Whose audience hears it.
    pub scope: Scope<'a>,
}

/// The ordered events of replacing a session id's binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplacementPlan<'a> {
    /// Cross-scope or same-scope.
    pub kind: ReplacementKind,
    /// Always `[left in old scope, joined in new scope]`, in that order.
    pub events: [LifecycleEvent<'a>; 2],
}

/// Plans the replacement of `session_id` bound in `old_scope` by a new binding in `new_scope`.
/// The broker emits `events` in order: the old scope's audience hears `left` before anyone hears
/// `joined`, and the new binding is installed before the old socket ends.
pub fn plan_replacement<'a>(
    session_id: &'a str,
    old_scope: Scope<'a>,
    new_scope: Scope<'a>,
) -> ReplacementPlan<'a> {
    let kind = if same_scope(old_scope, new_scope) {
        ReplacementKind::SameScopeLeftBeforeJoined
    } else {
        ReplacementKind::OldLeftBeforeNewJoined
    };
    ReplacementPlan {
        kind,
        events: [
            LifecycleEvent {
                kind: LifecycleKind::Left,
                session_id,
                scope: old_scope,
            },
            LifecycleEvent {
                kind: LifecycleKind::Joined,
                session_id,
                scope: new_scope,
            },
        ],
    }
}

/// What to do with a frame read from a connection.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameDisposition {
    /// The connection holds the session's current binding: process the frame.
    Accept = 1,
    /// The connection was superseded (or never bound): drop the frame, emit nothing.
    Discard = 2,
}

impl FrameDisposition {
    /// `accept` or `discard`.
    pub const fn as_str(self) -> &'static str {
        match self {
            FrameDisposition::Accept => "accept",
            FrameDisposition::Discard => "discard",
        }
    }
}

/// Decides a frame's fate from the binding generation of the connection it arrived on and the
/// session's current binding generation (`None` when the session is no longer bound). Every
/// replacement increments the generation, so only the newest connection's frames are accepted.
pub fn frame_disposition(
    connection_generation: u64,
    current_generation: Option<u64>,
) -> FrameDisposition {
    if current_generation == Some(connection_generation) {
        FrameDisposition::Accept
    } else {
        FrameDisposition::Discard
    }
}

fn indices(candidates: &[Session<'_>], keep: impl Fn(&Session<'_>) -> bool) -> Vec<usize> {
    candidates
        .iter()
        .enumerate()
        .filter(|(_, s)| keep(s))
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::ScopeId;

    fn s<'a>(id: &'a str, name: &'a str, scope: Option<&'a str>) -> Session<'a> {
        Session {
            id,
            name: Some(name),
            scope: scope.map(|x| ScopeId::parse(x).unwrap()),
        }
    }
    const A: Option<&str> = Some("Scope_AAAAAAAAAA");
    const B: Option<&str> = Some("Scope_BBBBBBBBBB");

    #[test]
    fn names_are_case_sensitive() {
        let c = [s("id-1", "Worker", A), s("id-2", "worker", A)];
        let a = ScopeId::parse("Scope_AAAAAAAAAA");
        let r = resolve_target(a, "worker", &c);
        assert_eq!(
            r,
            Resolution {
                kind: ResolveKind::SameScopeName,
                matches: vec![1]
            }
        );
        let r = resolve_target(a, "WORKER", &c);
        assert_eq!(r.kind, ResolveKind::SessionNotFound);
    }

    #[test]
    fn name_step_beats_prefix_step_and_empty_selector_finds_nothing() {
        let c = [s("abc-1", "x", A), s("abc-2", "abc", A)];
        let a = ScopeId::parse("Scope_AAAAAAAAAA");
        assert_eq!(
            resolve_target(a, "abc", &c),
            Resolution {
                kind: ResolveKind::SameScopeName,
                matches: vec![1]
            }
        );
        assert_eq!(resolve_target(a, "", &c).kind, ResolveKind::SessionNotFound);
    }

    #[test]
    fn audiences_exclude_subject_and_other_scopes() {
        let c = [
            s("a1", "a", A),
            s("a2", "b", A),
            s("b1", "c", B),
            s("u1", "d", None),
        ];
        let a = ScopeId::parse("Scope_AAAAAAAAAA");
        assert_eq!(
            audience(AudienceEvent::PresenceUpdate, "a1", a, &c),
            vec![1]
        );
        assert_eq!(
            audience(AudienceEvent::SessionJoined, "u1", None, &c),
            Vec::<usize>::new()
        );
        assert_eq!(list_visible("u1", None, &c), vec![3]);
    }

    #[test]
    fn kinds_say_whether_they_resolved_and_events_parse_by_name() {
        let kinds = [
            (ResolveKind::GlobalExactId, true),
            (ResolveKind::SameScopeName, true),
            (ResolveKind::SameScopePrefix, true),
            (ResolveKind::AmbiguousTarget, false),
            (ResolveKind::SessionNotFound, false),
        ];
        for (kind, resolved) in kinds {
            assert_eq!(kind.is_resolved(), resolved, "{kind:?}");
        }
        let names = ["session_joined", "session_left", "presence_update"];
        for (event, name) in AudienceEvent::all().into_iter().zip(names) {
            assert_eq!(event.as_str(), name);
            assert_eq!(AudienceEvent::from_name(name), Some(event));
        }
        for unknown in ["", "session_join", "Session_Joined", "presence_update "] {
            assert_eq!(AudienceEvent::from_name(unknown), None, "{unknown:?}");
        }
    }

    #[test]
    fn narrow_never_widens() {
        let base = ["a", "b", "c"];
        assert_eq!(narrow(&base, &["c", "zzz", "a"]), vec![&"a", &"c"]);
        assert!(narrow(&base, &[]).is_empty());
    }

    #[test]
    fn replacement_and_late_frames() {
        let a = ScopeId::parse("Scope_AAAAAAAAAA");
        let b = ScopeId::parse("Scope_BBBBBBBBBB");
        let plan = plan_replacement("x", a, b);
        assert_eq!(plan.kind, ReplacementKind::OldLeftBeforeNewJoined);
        assert_eq!(plan.events[0].kind, LifecycleKind::Left);
        assert_eq!(plan.events[0].scope, a);
        assert_eq!(plan.events[1].kind, LifecycleKind::Joined);
        assert_eq!(plan.events[1].scope, b);
        assert_eq!(
            plan_replacement("x", None, None).kind,
            ReplacementKind::SameScopeLeftBeforeJoined
        );
        assert_eq!(frame_disposition(1, Some(2)), FrameDisposition::Discard);
        assert_eq!(frame_disposition(2, Some(2)), FrameDisposition::Accept);
        assert_eq!(frame_disposition(2, None), FrameDisposition::Discard);
    }
}
