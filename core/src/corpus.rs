//! The protocol-v4 acceptance corpus: embedded from `vectors/protocol-v4.json`, its semantics
//! hash, and a runner that executes every vector whose operation is a pure rule.

use std::sync::OnceLock;

use crate::canonical::{self, Value};
use crate::error::{Error, ErrorCode};
use crate::protocol::{SCOPE_A, SCOPE_B, VECTOR_SCHEMA_VERSION, VECTORS_HASH_DOMAIN};
use crate::routing::{self, AudienceEvent, Session};
use crate::scope::{Scope, ScopeId, ScopeInput, invalid_scope, parse_scope, parse_scope_input};

/// The corpus file exactly as shipped in `vectors/protocol-v4.json`, embedded from the crate's own
/// copy (`core/data/`, written by `cargo xtask gen`, checked in CI) so the crate can be packaged.
pub const CORPUS_JSON: &str = include_str!("../data/protocol-v4.json");

/// Operations that need a live broker; pure runners skip them with [`SKIP_REASON_WIRE`].
pub const WIRE_OPERATIONS: [&str; 5] = ["send", "ask", "reply", "cancel_ask", "defer_ask"];

/// Every operation a protocol-v4 vector names: the pure rules [`run_vector`] executes, then the
/// [`WIRE_OPERATIONS`] that need a broker. The corpus tests hold it equal to what the published
/// corpus uses; the TypeScript `ProtocolV4Operation` is generated from it.
pub const OPERATIONS: [&str; 13] = [
    "validate_scope",
    "list",
    "session_joined",
    "session_left",
    "presence_update",
    "resolve",
    "send",
    "ask",
    "reply",
    "cancel_ask",
    "defer_ask",
    "replace",
    "late_frame",
];

/// Every outcome a vector's `expected` may name (the TypeScript `ProtocolV4Expected`; `hidden`
/// is in that type although no published vector uses it).
pub const OUTCOMES: [&str; 15] = [
    "valid_scoped",
    "valid_unscoped",
    "invalid_scope",
    "visible",
    "hidden",
    "global_exact_id",
    "same_scope_name",
    "same_scope_prefix",
    "AMBIGUOUS_TARGET",
    "SESSION_NOT_FOUND",
    "delivered",
    "exact_edge",
    "old_left_before_new_joined",
    "same_scope_left_before_joined",
    "discard",
];
/// Why pure runners skip a wire operation.
pub const SKIP_REASON_WIRE: &str = "wire behaviour: runs as real sessions against a live broker";

/// One acceptance vector, typed. Fields absent from the vector are `None`.
#[derive(Debug)]
pub struct Vector<'a> {
    /// Stable id.
    pub name: &'a str,
    /// The operation.
    pub operation: &'a str,
    /// The expected outcome.
    pub expected: &'a str,
    /// `scopeInput`: absent, or any JSON value.
    pub scope_input: Option<&'a Value<'a>>,
    /// `actorId`.
    pub actor_id: Option<&'a str>,
    /// `actorScope` (`Some(None)` is an explicit null).
    pub actor_scope: Option<Option<&'a str>>,
    /// `subjectId`.
    pub subject_id: Option<&'a str>,
    /// `subjectScope`.
    pub subject_scope: Option<Option<&'a str>>,
    /// `selector`.
    pub selector: Option<&'a str>,
    /// `candidates`.
    pub candidates: Vec<Candidate<'a>>,
    /// `expectedTargetIds`.
    pub expected_target_ids: Option<Vec<&'a str>>,
    /// `expectedAudienceIds`.
    pub expected_audience_ids: Option<Vec<&'a str>>,
    /// `expectedEvents`.
    pub expected_events: Option<Vec<&'a str>>,
}

/// A fixture session of a vector.
#[derive(Clone, Copy, Debug)]
pub struct Candidate<'a> {
    /// Session id.
    pub id: &'a str,
    /// Session name.
    pub name: Option<&'a str>,
    /// Scope, `None` for null.
    pub scope: Option<&'a str>,
}

fn bad(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

fn opt_str<'a>(v: &'a Value<'a>, key: &str, at: &str) -> Result<Option<&'a str>, Error> {
    match v.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(bad(format!("{at}.{key} must be a string"))),
    }
}

fn opt_scope<'a>(v: &'a Value<'a>, key: &str, at: &str) -> Result<Option<Option<&'a str>>, Error> {
    match v.get(key) {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(None)),
        Some(Value::String(s)) => Ok(Some(Some(s))),
        Some(_) => Err(bad(format!("{at}.{key} must be a string or null"))),
    }
}

fn opt_str_list<'a>(v: &'a Value<'a>, key: &str, at: &str) -> Result<Option<Vec<&'a str>>, Error> {
    match v.get(key) {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .ok_or_else(|| bad(format!("{at}.{key} must hold strings")))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(bad(format!("{at}.{key} must be an array"))),
    }
}

fn req_str<'a>(v: &'a Value<'a>, key: &str, at: &str) -> Result<&'a str, Error> {
    opt_str(v, key, at)?.ok_or_else(|| bad(format!("{at}.{key} is required")))
}

/// Parses a candidate list (an array of `{id, name?, scope?}` objects; scope `null`, absent or
/// `""` is unscoped).
pub fn parse_candidates<'a>(value: &'a Value<'a>, at: &str) -> Result<Vec<Candidate<'a>>, Error> {
    let items = value
        .as_array()
        .ok_or_else(|| bad(format!("{at} must be an array")))?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            // Paths are formatted only when something is wrong: this runs per routed message.
            let here = || format!("{at}[{i}]");
            if !matches!(item, Value::Object(_)) {
                return Err(bad(format!("{} must be an object", here())));
            }
            let name = match item.get("name") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(&**s),
                Some(_) => return Err(bad(format!("{}.name must be a string or null", here()))),
            };
            let id = match item.get("id") {
                Some(Value::String(s)) => &**s,
                Some(_) => return Err(bad(format!("{}.id must be a string", here()))),
                None => return Err(bad(format!("{}.id is required", here()))),
            };
            let scope = match item.get("scope") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(&**s),
                Some(_) => return Err(bad(format!("{}.scope must be a string or null", here()))),
            };
            Ok(Candidate { id, name, scope })
        })
        .collect()
}

/// Converts candidates to routing sessions, validating their scopes.
pub fn to_sessions<'a>(candidates: &[Candidate<'a>], at: &str) -> Result<Vec<Session<'a>>, Error> {
    candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let scope = match c.scope {
                None | Some("") => None,
                Some(text) => Some(
                    ScopeId::parse(text)
                        .ok_or_else(|| invalid_scope(&format!("{at}[{i}].scope")))?,
                ),
            };
            Ok(Session {
                id: c.id,
                name: c.name,
                scope,
            })
        })
        .collect()
}

/// Parses the vectors of a corpus document (the shape of `vectors/protocol-v4.json`).
pub fn parse_vectors<'a>(document: &'a Value<'a>) -> Result<Vec<Vector<'a>>, Error> {
    {
        let vectors = document
            .get("vectors")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("$.vectors must be an array"))?;
        vectors
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let at = format!("$.vectors[{i}]");
                Ok(Vector {
                    name: req_str(v, "name", &at)?,
                    operation: req_str(v, "operation", &at)?,
                    expected: req_str(v, "expected", &at)?,
                    scope_input: v.get("scopeInput"),
                    actor_id: opt_str(v, "actorId", &at)?,
                    actor_scope: opt_scope(v, "actorScope", &at)?,
                    subject_id: opt_str(v, "subjectId", &at)?,
                    subject_scope: opt_scope(v, "subjectScope", &at)?,
                    selector: opt_str(v, "selector", &at)?,
                    candidates: match v.get("candidates") {
                        None => Vec::new(),
                        Some(c) => parse_candidates(c, &format!("{at}.candidates"))?,
                    },
                    expected_target_ids: opt_str_list(v, "expectedTargetIds", &at)?,
                    expected_audience_ids: opt_str_list(v, "expectedAudienceIds", &at)?,
                    expected_events: opt_str_list(v, "expectedEvents", &at)?,
                })
            })
            .collect()
    }
}

struct Embedded {
    document: Value<'static>,
    semantics_hash: String,
}

fn embedded() -> &'static Embedded {
    static EMBEDDED: OnceLock<Embedded> = OnceLock::new();
    EMBEDDED.get_or_init(|| {
        let document =
            canonical::parse(CORPUS_JSON).expect("embedded corpus is valid canonical JSON");
        let semantics_hash = semantics_hash_of(&document).expect("embedded corpus hashes");
        Embedded {
            document,
            semantics_hash,
        }
    })
}

/// The embedded corpus document.
pub fn document() -> &'static Value<'static> {
    &embedded().document
}

/// The embedded vectors, typed.
pub fn vectors() -> Vec<Vector<'static>> {
    parse_vectors(document()).expect("embedded corpus is well-formed")
}

/// `canonicalHash(domain, {version, vectors})` of a corpus document; other top-level keys
/// (descriptions, counts, the published hash itself) are not part of the semantics.
pub fn semantics_hash_of(document: &Value<'_>) -> Result<String, Error> {
    let version = document
        .get("version")
        .cloned()
        .ok_or_else(|| bad("$.version is required"))?;
    let vectors = document
        .get("vectors")
        .cloned()
        .ok_or_else(|| bad("$.vectors is required"))?;
    let hashed = Value::Object(vec![
        ("version".into(), version),
        ("vectors".into(), vectors),
    ]);
    canonical::canonical_hash(VECTORS_HASH_DOMAIN, &hashed)
}

/// The semantics hash of the embedded corpus, computed (once) from its vectors.
pub fn semantics_hash() -> &'static str {
    &embedded().semantics_hash
}

/// The canonical JSON of `{version, vectors}`: exactly what the semantics hash covers.
pub fn semantics_payload() -> String {
    let doc = document();
    let hashed = Value::Object(vec![
        ("version".into(), Value::Int(VECTOR_SCHEMA_VERSION as i64)),
        (
            "vectors".into(),
            doc.get("vectors").cloned().unwrap_or(Value::Null),
        ),
    ]);
    canonical::canonical_json(&hashed).expect("embedded corpus is canonical")
}

/// The result of running one vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Executed; `Ok` when the observed outcome matched the expectation, `Err` with what was
    /// observed otherwise.
    Executed(Result<(), String>),
    /// Not executed by a pure runner, with the reason.
    Skipped(&'static str),
}

/// The fixture label of a scope in `expectedEvents`: `A`, `B` or `U` (unscoped).
pub fn scope_label(scope: Scope<'_>) -> &'static str {
    match scope.map(|s| s.as_str()) {
        None => "U",
        Some(SCOPE_A) => "A",
        Some(SCOPE_B) => "B",
        Some(_) => "?",
    }
}

fn need<T>(value: Option<T>, what: &str) -> Result<T, String> {
    value.ok_or_else(|| format!("vector lacks {what}"))
}

fn scope_of<'a>(value: Option<Option<&'a str>>, what: &str) -> Result<Scope<'a>, String> {
    parse_scope(need(value, what)?, what).map_err(|e| e.to_string())
}

fn compare<T: PartialEq + std::fmt::Debug>(
    what: &str,
    observed: T,
    expected: T,
) -> Result<(), String> {
    if observed == expected {
        Ok(())
    } else {
        Err(format!(
            "{what}: observed {observed:?}, expected {expected:?}"
        ))
    }
}

/// Executes one vector through the core's pure rules. Operations in [`WIRE_OPERATIONS`] are
/// skipped; an operation this runner does not know is a failure, never a silent skip.
pub fn run_vector(vector: &Vector<'_>) -> Outcome {
    if WIRE_OPERATIONS.contains(&vector.operation) {
        return Outcome::Skipped(SKIP_REASON_WIRE);
    }
    Outcome::Executed(execute(vector))
}

fn execute(v: &Vector<'_>) -> Result<(), String> {
    let sessions = to_sessions(&v.candidates, "candidates").map_err(|e| e.to_string())?;
    let ids = |indices: &[usize]| indices.iter().map(|&i| sessions[i].id).collect::<Vec<_>>();
    match v.operation {
        "validate_scope" => {
            let input = match v.scope_input {
                None => ScopeInput::Absent,
                Some(Value::String(s)) => ScopeInput::Text(s),
                Some(_) => ScopeInput::NotText,
            };
            let observed = match parse_scope_input(input, "scopeInput") {
                Ok(None) => "valid_unscoped",
                Ok(Some(_)) => "valid_scoped",
                Err(_) => "invalid_scope",
            };
            compare("outcome", observed, v.expected)
        }
        "list" => {
            let actor_scope = scope_of(v.actor_scope, "actorScope")?;
            let visible =
                routing::list_visible(need(v.actor_id, "actorId")?, actor_scope, &sessions);
            compare("outcome", "visible", v.expected)?;
            compare(
                "targets",
                ids(&visible),
                need(v.expected_target_ids.clone(), "expectedTargetIds")?,
            )
        }
        "session_joined" | "session_left" | "presence_update" => {
            let event = AudienceEvent::from_name(v.operation).expect("matched above");
            let subject_scope = scope_of(v.subject_scope, "subjectScope")?;
            let heard = routing::audience(
                event,
                need(v.subject_id, "subjectId")?,
                subject_scope,
                &sessions,
            );
            compare("outcome", "visible", v.expected)?;
            compare(
                "audience",
                ids(&heard),
                need(v.expected_audience_ids.clone(), "expectedAudienceIds")?,
            )
        }
        "resolve" => {
            let actor_scope = scope_of(v.actor_scope, "actorScope")?;
            let resolution =
                routing::resolve_target(actor_scope, need(v.selector, "selector")?, &sessions);
            compare("outcome", resolution.kind.as_str(), v.expected)?;
            compare(
                "targets",
                ids(&resolution.matches),
                v.expected_target_ids.clone().unwrap_or_default(),
            )
        }
        "replace" => {
            let id = need(v.subject_id, "subjectId")?;
            compare("actor", need(v.actor_id, "actorId")?, id)?;
            let plan = routing::plan_replacement(
                id,
                scope_of(v.actor_scope, "actorScope")?,
                scope_of(v.subject_scope, "subjectScope")?,
            );
            compare("outcome", plan.kind.as_str(), v.expected)?;
            let events: Vec<String> = plan
                .events
                .iter()
                .map(|e| {
                    format!(
                        "{}:{}:{}",
                        e.kind.as_str(),
                        e.session_id,
                        scope_label(e.scope)
                    )
                })
                .collect();
            compare(
                "events",
                events.iter().map(String::as_str).collect(),
                need(v.expected_events.clone(), "expectedEvents")?,
            )
        }
        "late_frame" => {
            // The actor's connection held binding generation 1; a replacement installed
            // generation 2, so a frame still arriving on the old connection must be discarded
            // and produce no event.
            let disposition = routing::frame_disposition(1, Some(2));
            let events: Vec<&str> = Vec::new();
            compare("outcome", disposition.as_str(), v.expected)?;
            compare(
                "events",
                events,
                need(v.expected_events.clone(), "expectedEvents")?,
            )
        }
        other => Err(format!("unknown operation {other:?}")),
    }
}

/// Counts from running a corpus.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Vectors in the corpus.
    pub total: usize,
    /// Executed and matched.
    pub passed: usize,
    /// Executed and did not match: `(name, what was observed)`.
    pub failed: Vec<(String, String)>,
    /// Not executed: `(name, reason)`.
    pub skipped: Vec<(String, &'static str)>,
}

impl Summary {
    /// Executed vectors.
    pub fn executed(&self) -> usize {
        self.passed + self.failed.len()
    }

    /// True when nothing failed and every vector was either executed or skipped.
    pub fn ok(&self) -> bool {
        self.failed.is_empty() && self.executed() + self.skipped.len() == self.total
    }
}

/// Runs every vector.
pub fn run_all(vectors: &[Vector<'_>]) -> Summary {
    let mut summary = Summary {
        total: vectors.len(),
        ..Summary::default()
    };
    for vector in vectors {
        match run_vector(vector) {
            Outcome::Executed(Ok(())) => summary.passed += 1,
            Outcome::Executed(Err(why)) => summary.failed.push((vector.name.to_string(), why)),
            Outcome::Skipped(reason) => summary.skipped.push((vector.name.to_string(), reason)),
        }
    }
    summary
}
