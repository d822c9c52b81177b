//! `authorizeSupervisorSubscription`: which principal may subscribe to which worker's or role's
//! lifecycle. It never throws: every malformed part of the state or the request fails closed
//! with a denial code.
//!
//! The state is read as the TypeScript core snapshots it: the request and its target must be
//! exact plain records of own data; the three maps (`principals`, `workers`,
//! `currentManagerByRun`) must be plain records of own data, or the whole map counts as absent;
//! inside them an entry that does not parse exactly (its own key, its kind's fields, valid
//! scalars, dense unique string arrays) is left out, and a left-out worker also makes role
//! enumeration incomplete. Nothing reaches a getter, a proxy or a prototype.

use super::{Rec, SUPERVISED_ROLES, SUPERVISOR_PRINCIPAL_KINDS};
use crate::contract::{Js, JsObject, JsStr, Proto};

/// What `authorizeSupervisorSubscription` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// `{allowed: true, reason}`.
    Allowed(&'static str),
    /// `{allowed: false, code}`.
    Denied(&'static str),
}

impl Decision {
    /// The decision object.
    pub fn to_js(self) -> Js {
        match self {
            Decision::Allowed(reason) => Rec::new()
                .put("allowed", Js::Bool(true))
                .put("reason", Js::str(reason))
                .build(),
            Decision::Denied(code) => Rec::new()
                .put("allowed", Js::Bool(false))
                .put("code", Js::str(code))
                .build(),
        }
    }
}

use Decision::{Allowed, Denied};

const PRINCIPAL_BASE: &[&str] = &[
    "principalId",
    "kind",
    "state",
    "bindingEpoch",
    "bindingGeneration",
];
const PRINCIPAL_FIELDS: &[&str] = &[
    "principalId",
    "kind",
    "state",
    "bindingEpoch",
    "bindingGeneration",
    "participantId",
    "bossRunId",
    "ownedWorkerIds",
    "assignedParticipantIds",
];
const WORKER_BASE: &[&str] = &["workerId", "workerGeneration", "active"];
const WORKER_FIELDS: &[&str] = &[
    "workerId",
    "workerGeneration",
    "active",
    "participantId",
    "role",
    "bossRunId",
];
const REQUEST_FIELDS: &[&str] = &[
    "actorPrincipalId",
    "actorBindingEpoch",
    "actorBindingGeneration",
    "target",
    "followReplacement",
];
const TARGET_FIELDS: &[&str] = &["kind", "workerId", "workerGeneration", "bossRunId", "role"];
const STATE_FIELDS: &[&str] = &["principals", "workers", "currentManagerByRun"];

/// A plain object whose own keys are all strings (within `allowed`, when given) naming
/// enumerable data properties.
fn own_data_record<'v>(value: &'v Js, allowed: Option<&[&str]>) -> Option<&'v JsObject> {
    let Js::Object(object) = value else {
        return None;
    };
    if object.proto != Proto::Plain || object.symbols {
        return None;
    }
    let permitted =
        |key: &JsStr| allowed.is_none_or(|a| key.lone.is_none() && a.contains(&key.text.as_str()));
    object
        .members
        .iter()
        .all(|(key, item)| permitted(key) && !matches!(item, Js::Hidden))
        .then_some(object)
}

fn key_is(key: &JsStr, name: &str) -> bool {
    key.lone.is_none() && key.text == name
}

/// Every required key present, and no key outside required and optional.
fn exact(object: &JsObject, required: &[&str], optional: &[&str]) -> bool {
    required
        .iter()
        .all(|r| object.members.iter().any(|(k, _)| key_is(k, r)))
        && object.members.iter().all(|(k, _)| {
            k.lone.is_none()
                && (required.contains(&k.text.as_str()) || optional.contains(&k.text.as_str()))
        })
}

fn member<'v>(object: &'v JsObject, name: &str) -> Option<&'v Js> {
    object
        .members
        .iter()
        .find(|(k, _)| key_is(k, name))
        .map(|(_, v)| v)
}

/// `readString` as a test: a non-empty, well-formed string.
fn string(value: Option<&Js>) -> Option<&str> {
    match value {
        Some(Js::Str(s)) if s.lone.is_none() && !s.text.is_empty() => Some(&s.text),
        _ => None,
    }
}

/// A counter of minimum 1 (binding epochs and generations, worker generations).
fn counter(value: Option<&Js>) -> Option<i64> {
    value.and_then(Js::safe_integer).filter(|n| *n >= 1)
}

fn boolean(value: Option<&Js>) -> Option<bool> {
    match value {
        Some(Js::Bool(b)) => Some(*b),
        _ => None,
    }
}

fn one_of(value: Option<&Js>, allowed: &[&'static str]) -> Option<&'static str> {
    let text = value.and_then(Js::as_str)?;
    allowed.iter().copied().find(|a| *a == text)
}

/// A dense array of own enumerable data elements, no other keys, each a distinct non-empty
/// string.
fn string_list(value: Option<&Js>) -> Option<Vec<&str>> {
    let Some(Js::Array(array)) = value else {
        return None;
    };
    if array.extra_keys {
        return None;
    }
    let mut out: Vec<&str> = Vec::with_capacity(array.items.len());
    for item in &array.items {
        let entry = string(item.as_ref())?;
        if out.contains(&entry) {
            return None;
        }
        out.push(entry);
    }
    Some(out)
}

#[derive(Debug)]
struct Principal<'v> {
    id: &'v str,
    kind: &'static str,
    active: bool,
    epoch: i64,
    generation: i64,
    participant: Option<&'v str>,
    run: Option<&'v str>,
    owned: Vec<&'v str>,
    assigned: Vec<&'v str>,
}

fn principal<'v>(value: &'v Js, map_id: &str) -> Option<Principal<'v>> {
    let raw = own_data_record(value, Some(PRINCIPAL_FIELDS))?;
    let kind = one_of(member(raw, "kind"), SUPERVISOR_PRINCIPAL_KINDS)?;
    let extra: &[&str] = match kind {
        "ordinary_owner" => &["ownedWorkerIds"],
        "manager" => &["participantId", "bossRunId", "assignedParticipantIds"],
        _ => &["bossRunId"],
    };
    let required: Vec<&str> = PRINCIPAL_BASE.iter().chain(extra).copied().collect();
    if !exact(raw, &required, &[]) {
        return None;
    }
    let id = string(member(raw, "principalId")).filter(|id| *id == map_id)?;
    let active = match member(raw, "state").and_then(Js::as_str) {
        Some("active") => true,
        Some("revoked") => false,
        _ => return None,
    };
    let mut p = Principal {
        id,
        kind,
        active,
        epoch: counter(member(raw, "bindingEpoch"))?,
        generation: counter(member(raw, "bindingGeneration"))?,
        participant: None,
        run: None,
        owned: Vec::new(),
        assigned: Vec::new(),
    };
    if kind == "ordinary_owner" {
        p.owned = string_list(member(raw, "ownedWorkerIds"))?;
        return Some(p);
    }
    p.run = Some(string(member(raw, "bossRunId"))?);
    if kind == "manager" {
        p.participant = Some(string(member(raw, "participantId"))?);
        p.assigned = string_list(member(raw, "assignedParticipantIds"))?;
    }
    Some(p)
}

#[derive(Debug)]
struct Worker<'v> {
    id: &'v str,
    generation: i64,
    participant: Option<&'v str>,
    role: Option<&'static str>,
    run: Option<&'v str>,
    active: bool,
}

fn worker<'v>(value: &'v Js, map_id: &str) -> Option<Worker<'v>> {
    let raw = own_data_record(value, Some(WORKER_FIELDS))?;
    let ordinary = exact(raw, WORKER_BASE, &[]);
    let in_run = exact(
        raw,
        &[
            "workerId",
            "workerGeneration",
            "active",
            "role",
            "bossRunId",
        ],
        &["participantId"],
    );
    if !ordinary && !in_run {
        return None;
    }
    let mut w = Worker {
        id: string(member(raw, "workerId")).filter(|id| *id == map_id)?,
        generation: counter(member(raw, "workerGeneration"))?,
        participant: None,
        role: None,
        run: None,
        active: boolean(member(raw, "active"))?,
    };
    if ordinary {
        return Some(w);
    }
    w.role = Some(one_of(member(raw, "role"), SUPERVISED_ROLES)?);
    w.run = Some(string(member(raw, "bossRunId"))?);
    if let Some(participant) = member(raw, "participantId") {
        w.participant = Some(string(Some(participant))?);
    }
    Some(w)
}

/// The entries of a map whose keys are valid strings (others are ignored), each read by `entry`.
fn map_entries<'v, T>(
    map: &'v JsObject,
    mut entry: impl FnMut(&'v str, &'v Js) -> Option<T>,
) -> Vec<(&'v str, Option<T>)> {
    map.members
        .iter()
        .filter(|(key, _)| key.lone.is_none() && !key.text.is_empty())
        .map(|(key, value)| (key.text.as_str(), entry(&key.text, value)))
        .collect()
}

/// The authoritative maps; `None` for a map that is not a plain record of own data.
struct Maps<'v> {
    principals: Option<Vec<(&'v str, Principal<'v>)>>,
    workers: Option<Vec<(&'v str, Worker<'v>)>>,
    role_set_complete: bool,
    managers: Option<Vec<(&'v str, &'v str)>>,
}

fn maps(state: &Js) -> Maps<'_> {
    let none = Maps {
        principals: None,
        workers: None,
        role_set_complete: false,
        managers: None,
    };
    let Js::Object(state) = state else {
        return none;
    };
    let known = |k: &JsStr| k.lone.is_none() && STATE_FIELDS.contains(&k.text.as_str());
    if state.symbols || !state.members.iter().all(|(k, _)| known(k)) {
        return none;
    }
    let map = |name: &str| match member(state, name) {
        Some(Js::Hidden) | None => None,
        Some(value) => own_data_record(value, None),
    };
    let principals = map("principals").map(|m| {
        map_entries(m, |id, v| principal(v, id))
            .into_iter()
            .filter_map(|(id, p)| Some((id, p?)))
            .collect()
    });
    let workers = map("workers").map(|m| map_entries(m, |id, v| worker(v, id)));
    let role_set_complete = workers
        .as_ref()
        .is_some_and(|w| w.iter().all(|(_, w)| w.is_some()));
    let workers = workers.map(|w| w.into_iter().filter_map(|(id, w)| Some((id, w?))).collect());
    let managers = map("currentManagerByRun").map(|m| {
        map_entries(m, |_, v| string(Some(v)))
            .into_iter()
            .filter_map(|(run, p)| Some((run, p?)))
            .collect()
    });
    Maps {
        principals,
        workers,
        role_set_complete,
        managers,
    }
}

fn lookup<'m, T>(map: &'m [(&str, T)], key: &str) -> Option<&'m T> {
    map.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
}

impl<'v> Maps<'v> {
    /// The run's current Manager: named by `currentManagerByRun`, an active manager principal of
    /// that run with a participant identity.
    fn current_manager(&self, run: &str) -> Option<&Principal<'v>> {
        let principal_id = lookup(self.managers.as_ref()?, run)?;
        let p = lookup(self.principals.as_ref()?, principal_id)?;
        (p.kind == "manager" && p.active && p.run == Some(run) && p.participant.is_some())
            .then_some(p)
    }

    fn is_current_manager(&self, p: &Principal<'_>) -> bool {
        if p.kind != "manager" || p.participant.is_none() {
            return false;
        }
        let Some(run) = p.run else { return false };
        self.current_manager(run)
            .is_some_and(|m| m.id == p.id && m.participant == p.participant)
    }

    /// The active workers a role selector names; the current Manager's must be exactly one.
    fn role_workers(&self, run: &str, role: &str) -> Option<Vec<&Worker<'v>>> {
        let workers = self.workers.as_ref().filter(|_| self.role_set_complete)?;
        let all = workers.iter().map(|(_, w)| w);
        if role == "manager" {
            let manager = self.current_manager(run)?;
            let matches: Vec<&Worker<'v>> = all
                .filter(|w| {
                    w.run == Some(run)
                        && w.participant == manager.participant
                        && w.role == Some("manager")
                        && w.active
                })
                .collect();
            return (matches.len() == 1).then_some(matches);
        }
        let matches: Vec<&Worker<'v>> = all
            .filter(|w| w.run == Some(run) && w.role == Some(role) && w.active)
            .collect();
        (!matches.is_empty()).then_some(matches)
    }
}

/// The requested target.
enum Target<'v> {
    Worker { id: &'v str, generation: i64 },
    Role { run: &'v str, role: &'static str },
}

fn target(value: &Js) -> Option<Target<'_>> {
    let raw = own_data_record(value, Some(TARGET_FIELDS))?;
    match member(raw, "kind").and_then(Js::as_str)? {
        "worker" if exact(raw, &["kind", "workerId", "workerGeneration"], &[]) => {
            Some(Target::Worker {
                id: string(member(raw, "workerId"))?,
                generation: counter(member(raw, "workerGeneration"))?,
            })
        }
        "role" if exact(raw, &["kind", "bossRunId", "role"], &[]) => Some(Target::Role {
            run: string(member(raw, "bossRunId"))?,
            role: one_of(member(raw, "role"), SUPERVISED_ROLES)?,
        }),
        _ => None,
    }
}

struct Request<'v> {
    actor: &'v str,
    epoch: i64,
    generation: i64,
    target: &'v Js,
    follow: bool,
}

fn request(value: &Js) -> Option<Request<'_>> {
    let raw = own_data_record(value, Some(REQUEST_FIELDS))?;
    if !exact(raw, REQUEST_FIELDS, &[]) {
        return None;
    }
    Some(Request {
        actor: string(member(raw, "actorPrincipalId"))?,
        epoch: counter(member(raw, "actorBindingEpoch"))?,
        generation: counter(member(raw, "actorBindingGeneration"))?,
        target: member(raw, "target")?,
        follow: boolean(member(raw, "followReplacement"))?,
    })
}

/// `authorizeSupervisorSubscription(state, request)`.
pub fn authorize(state: &Js, request_value: &Js) -> Decision {
    let Some(req) = request(request_value) else {
        return Denied("UNKNOWN_SUBSCRIBER");
    };
    let Some(wanted) = target(req.target) else {
        return Denied("UNKNOWN_TARGET");
    };
    let maps = maps(state);
    let Some(principals) = &maps.principals else {
        return Denied("UNKNOWN_SUBSCRIBER");
    };
    let Some(actor) = lookup(principals, req.actor) else {
        return Denied("UNKNOWN_SUBSCRIBER");
    };
    if !actor.active {
        return Denied("REVOKED_SUBSCRIBER");
    }
    if actor.epoch != req.epoch || actor.generation != req.generation {
        return Denied("STALE_SUBSCRIBER_BINDING");
    }
    if let Target::Role { run, role } = wanted {
        let selector = actor.run == Some(run)
            && (actor.kind == "controller" || (actor.kind == "boss" && role == "manager"));
        if !selector {
            return Denied("ROLE_SELECTOR_DENIED");
        }
    }
    let targets: Option<Vec<&Worker<'_>>> = match wanted {
        Target::Worker { id, .. } => maps
            .workers
            .as_ref()
            .map(|w| lookup(w, id).into_iter().collect()),
        Target::Role { run, role } => maps.role_workers(run, role),
    };
    let targets = match targets {
        Some(t) if !t.is_empty() && t.iter().all(|w| w.active) => t,
        _ => return Denied("UNKNOWN_TARGET"),
    };
    if let Target::Worker { generation, .. } = wanted
        && targets[0].generation != generation
    {
        return Denied("STALE_TARGET_GENERATION");
    }
    if targets.iter().any(|t| actor.run != t.run) {
        return Denied("CROSS_RUN_DENIED");
    }
    if req.follow {
        let permitted = match wanted {
            Target::Role { run, role } => {
                ((actor.kind == "boss" && role == "manager") || actor.kind == "controller")
                    && actor.run == Some(run)
            }
            Target::Worker { .. } => false,
        };
        if !permitted {
            return Denied("FOLLOW_REPLACEMENT_DENIED");
        }
    }
    if maps.managers.is_none() && actor.kind != "boss" {
        return Denied("UNKNOWN_TARGET");
    }
    if actor.kind == "ordinary_owner"
        && targets
            .iter()
            .all(|t| actor.owned.contains(&t.id) && t.run.is_none())
    {
        return Allowed("owner_to_worker");
    }
    if actor.kind == "manager"
        && actor.run.is_some()
        && maps.is_current_manager(actor)
        && targets.iter().all(|t| {
            t.run == actor.run
                && matches!(t.role, Some("worker" | "scout"))
                && t.participant.is_some_and(|p| actor.assigned.contains(&p))
        })
    {
        return Allowed("manager_to_assignment");
    }
    let current_manager = actor
        .run
        .and_then(|run| maps.current_manager(run))
        .and_then(|m| m.participant);
    if actor.kind == "boss"
        && actor.run.is_some()
        && current_manager.is_some()
        && targets
            .iter()
            .all(|t| t.role == Some("manager") && t.participant == current_manager)
    {
        return Allowed("boss_to_manager");
    }
    if actor.kind == "controller"
        && actor.run.is_some()
        && targets
            .iter()
            .all(|t| t.run == actor.run && t.participant.is_some())
    {
        return Allowed("controller_to_participant");
    }
    Denied("SUPERVISION_EDGE_DENIED")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(text: &str) -> Js {
        Js::parse_snapshot(text).unwrap()
    }

    const STATE: &str = concat!(
        r#"{"principals":{"o":{"principalId":"o","kind":"ordinary_owner","state":"active","#,
        r#""bindingEpoch":1,"bindingGeneration":1,"ownedWorkerIds":["w"]}},"#,
        r#""workers":{"w":{"workerId":"w","workerGeneration":2,"active":true}},"#,
        r#""currentManagerByRun":{}}"#
    );
    const REQUEST: &str = concat!(
        r#"{"actorPrincipalId":"o","actorBindingEpoch":1,"actorBindingGeneration":1,"#,
        r#""target":{"kind":"worker","workerId":"w","workerGeneration":2},"#,
        r#""followReplacement":false}"#
    );

    #[test]
    fn an_owner_supervises_its_worker_and_malformed_input_fails_closed() {
        assert_eq!(
            authorize(&js(STATE), &js(REQUEST)),
            Allowed("owner_to_worker")
        );
        let edited = |from: &str, to: &str| js(&REQUEST.replacen(from, to, 1));
        assert_eq!(
            authorize(
                &js(STATE),
                &edited("\"actorBindingEpoch\":1", "\"actorBindingEpoch\":h")
            ),
            Denied("UNKNOWN_SUBSCRIBER")
        );
        assert_eq!(
            authorize(
                &js(STATE),
                &edited("{\"kind\":\"worker\"", "{!\"kind\":\"worker\"")
            ),
            Denied("UNKNOWN_TARGET")
        );
        assert_eq!(
            authorize(
                &js(STATE),
                &edited("\"workerGeneration\":2", "\"workerGeneration\":3")
            ),
            Denied("STALE_TARGET_GENERATION")
        );
        assert_eq!(
            authorize(&js("p"), &js(REQUEST)),
            Denied("UNKNOWN_SUBSCRIBER")
        );
        let state = |from: &str, to: &str| js(&STATE.replacen(from, to, 1));
        assert_eq!(
            authorize(
                &state("\"currentManagerByRun\":{}", "\"currentManagerByRun\":p"),
                &js(REQUEST)
            ),
            Denied("UNKNOWN_TARGET")
        );
        assert_eq!(
            authorize(&state("[\"w\"]", "[\"w\",\"w\"]"), &js(REQUEST)),
            Denied("UNKNOWN_SUBSCRIBER")
        );
        assert_eq!(
            authorize(
                &state("\"active\":true", "\"active\":true,\"x\":1"),
                &js(REQUEST)
            ),
            Denied("UNKNOWN_TARGET")
        );
    }
}
