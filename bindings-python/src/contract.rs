//! The contract: scope parsing and comparison, routing, canonical JSON and hashes, the semantics
//! hash and vector corpora, and every operation of the core's registry (`contract_call`, which
//! holds the transport envelope check, the policy and the Boss rules).

use agent_intercom_core::ErrorCode;
use agent_intercom_core::canonical;
use agent_intercom_core::corpus;
use agent_intercom_core::protocol;
use agent_intercom_core::routing::{self, AudienceEvent, Session};
use agent_intercom_core::scope::{self, Scope, ScopeInput};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use serde_json::Value;

use crate::convert::{self, to_json, to_py};
use crate::{ContractError, PyRes, fail, py_error};

/// A `str` argument (`INVALID_ARGUMENT` for another type).
pub fn str_arg(value: &Bound<'_, PyAny>, name: &str) -> PyRes<String> {
    let s = value
        .cast::<PyString>()
        .map_err(|_| fail(ErrorCode::InvalidArgument, format!("{name} must be a str")))?;
    convert::text(s, name).map_err(py_error)
}

/// A non-negative `int` argument (a `bool` is refused).
pub fn u64_arg(value: &Bound<'_, PyAny>, name: &str) -> PyRes<u64> {
    let refused = || {
        fail(
            ErrorCode::InvalidArgument,
            format!("{name} must be a non-negative integer"),
        )
    };
    if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(refused());
    }
    value.extract::<u64>().map_err(|_| refused())
}

/// An optional whole number of milliseconds (`None`: `default`).
pub fn ms_arg(
    value: Option<&Bound<'_, PyAny>>,
    name: &str,
    default: std::time::Duration,
) -> PyRes<std::time::Duration> {
    match value.filter(|v| !v.is_none()) {
        Some(v) => Ok(std::time::Duration::from_millis(u64_arg(v, name)?)),
        None => Ok(default),
    }
}

/// A scope argument of any Python type: `None` and `""` unscoped, another non-`str` invalid.
/// The refusal never echoes the value.
pub fn scope_text(value: Option<&Bound<'_, PyAny>>, path: &str) -> PyRes<Option<String>> {
    let text = match value {
        None => None,
        Some(v) if v.is_none() => None,
        Some(v) => match v.cast::<PyString>() {
            Ok(s) => Some(s.to_cow().map(|c| c.into_owned()).map_err(|_| {
                py_error(scope::parse_scope_input(ScopeInput::NotText, path).unwrap_err())
            })?),
            Err(_) => {
                return Err(py_error(
                    scope::parse_scope_input(ScopeInput::NotText, path).unwrap_err(),
                ));
            }
        },
    };
    let input = text.as_deref().map_or(ScopeInput::Absent, ScopeInput::Text);
    scope::parse_scope_input(input, path).map_err(py_error)?;
    Ok(text.filter(|t| !t.is_empty()))
}

fn parsed(text: &Option<String>) -> Scope<'_> {
    // Checked by scope_text already.
    text.as_deref().and_then(scope::ScopeId::parse)
}

/// Parses a scope input: the scope id, or `None` for the unscoped group. `INVALID_SCOPE` names
/// `path` and never the value.
#[pyfunction]
#[pyo3(signature = (value, path = "scopeId"))]
fn parse_scope(value: Option<&Bound<'_, PyAny>>, path: &str) -> PyRes<Option<String>> {
    scope_text(value, path)
}

/// Strict equality of two scopes (each checked as `parse_scope` does).
#[pyfunction]
#[pyo3(signature = (left, right))]
fn same_scope(left: Option<&Bound<'_, PyAny>>, right: Option<&Bound<'_, PyAny>>) -> PyRes<bool> {
    let (l, r) = (scope_text(left, "left")?, scope_text(right, "right")?);
    Ok(scope::same_scope(parsed(&l), parsed(&r)))
}

fn with_sessions<T>(
    candidates: &Bound<'_, PyAny>,
    f: impl FnOnce(&[Session<'_>]) -> T,
) -> PyRes<T> {
    let text = convert::to_json_text(candidates, "candidates").map_err(py_error)?;
    let doc = canonical::parse(&text).map_err(py_error)?;
    let parsed = corpus::parse_candidates(&doc, "candidates").map_err(py_error)?;
    let sessions = corpus::to_sessions(&parsed, "candidates").map_err(py_error)?;
    Ok(f(&sessions))
}

fn ids(sessions: &[Session<'_>], indices: &[usize]) -> Vec<String> {
    indices
        .iter()
        .map(|&i| sessions[i].id.to_string())
        .collect()
}

/// Resolves a `send.to` selector: `{"kind": ..., "target_ids": [...]}`.
#[pyfunction]
#[pyo3(signature = (candidates, actor_scope, selector))]
fn resolve_target<'py>(
    py: Python<'py>,
    candidates: &Bound<'py, PyAny>,
    actor_scope: Option<&Bound<'py, PyAny>>,
    selector: &Bound<'py, PyAny>,
) -> PyRes<Bound<'py, PyDict>> {
    let scope = scope_text(actor_scope, "actor_scope")?;
    let selector = str_arg(selector, "selector")?;
    let (kind, targets) = with_sessions(candidates, |sessions| {
        let r = routing::resolve_target(parsed(&scope), &selector, sessions);
        (r.kind.as_str(), ids(sessions, &r.matches))
    })?;
    let out = PyDict::new(py);
    out.set_item("kind", kind)?;
    out.set_item("target_ids", targets)?;
    Ok(out)
}

/// The ids of the sessions `actor_id` may list.
#[pyfunction]
#[pyo3(signature = (candidates, actor_id, actor_scope = None))]
fn list_visible(
    candidates: &Bound<'_, PyAny>,
    actor_id: &Bound<'_, PyAny>,
    actor_scope: Option<&Bound<'_, PyAny>>,
) -> PyRes<Vec<String>> {
    let scope = scope_text(actor_scope, "actor_scope")?;
    let actor = str_arg(actor_id, "actor_id")?;
    with_sessions(candidates, |sessions| {
        ids(
            sessions,
            &routing::list_visible(&actor, parsed(&scope), sessions),
        )
    })
}

/// The ids of the sessions told of `event` about `subject_id`.
#[pyfunction]
#[pyo3(signature = (event, candidates, subject_id, subject_scope = None))]
fn audience(
    event: &Bound<'_, PyAny>,
    candidates: &Bound<'_, PyAny>,
    subject_id: &Bound<'_, PyAny>,
    subject_scope: Option<&Bound<'_, PyAny>>,
) -> PyRes<Vec<String>> {
    let name = str_arg(event, "event")?;
    let event = AudienceEvent::from_name(&name).ok_or_else(|| {
        let names = AudienceEvent::all().map(AudienceEvent::as_str);
        fail(
            ErrorCode::InvalidArgument,
            format!("event must be one of: {}", names.join(", ")),
        )
    })?;
    let scope = scope_text(subject_scope, "subject_scope")?;
    let subject = str_arg(subject_id, "subject_id")?;
    with_sessions(candidates, |sessions| {
        ids(
            sessions,
            &routing::audience(event, &subject, parsed(&scope), sessions),
        )
    })
}

fn str_list(value: &Bound<'_, PyAny>, name: &str) -> PyRes<Vec<String>> {
    match to_json(value, name).map_err(py_error)? {
        Value::Array(items) => items
            .into_iter()
            .map(|v| match v {
                Value::String(s) => Ok(s),
                _ => Err(fail(
                    ErrorCode::InvalidArgument,
                    format!("{name} must be a list of str"),
                )),
            })
            .collect(),
        _ => Err(fail(
            ErrorCode::InvalidArgument,
            format!("{name} must be a list of str"),
        )),
    }
}

/// Members of `base` that `kept` also holds, in `base` order (a filter narrows, never widens).
#[pyfunction]
fn narrow(base: &Bound<'_, PyAny>, kept: &Bound<'_, PyAny>) -> PyRes<Vec<String>> {
    let (base, kept) = (str_list(base, "base")?, str_list(kept, "kept")?);
    Ok(routing::narrow(&base, &kept).into_iter().cloned().collect())
}

/// What replacing a session's binding does: `{"kind", "events": [{"kind", "session_id",
/// "scope"}]}`.
#[pyfunction]
#[pyo3(signature = (session_id, old_scope = None, new_scope = None))]
fn plan_replacement<'py>(
    py: Python<'py>,
    session_id: &Bound<'py, PyAny>,
    old_scope: Option<&Bound<'py, PyAny>>,
    new_scope: Option<&Bound<'py, PyAny>>,
) -> PyRes<Bound<'py, PyDict>> {
    let id = str_arg(session_id, "session_id")?;
    let old = scope_text(old_scope, "old_scope")?;
    let new = scope_text(new_scope, "new_scope")?;
    let plan = routing::plan_replacement(&id, parsed(&old), parsed(&new));
    let events = PyList::empty(py);
    for e in &plan.events {
        let event = PyDict::new(py);
        event.set_item("kind", e.kind.as_str())?;
        event.set_item("session_id", e.session_id)?;
        event.set_item("scope", e.scope.map(|s| s.as_str()))?;
        events.append(event)?;
    }
    let out = PyDict::new(py);
    out.set_item("kind", plan.kind.as_str())?;
    out.set_item("events", events)?;
    Ok(out)
}

/// `"accept"` or `"discard"` for a frame of a connection of `connection_generation`.
#[pyfunction]
#[pyo3(signature = (connection_generation, current_generation = None))]
fn frame_disposition(
    connection_generation: &Bound<'_, PyAny>,
    current_generation: Option<&Bound<'_, PyAny>>,
) -> PyRes<&'static str> {
    let connection = u64_arg(connection_generation, "connection_generation")?;
    let current = match current_generation {
        Some(v) if !v.is_none() => Some(u64_arg(v, "current_generation")?),
        _ => None,
    };
    Ok(routing::frame_disposition(connection, current).as_str())
}

fn json_text(value: &Bound<'_, PyAny>) -> PyRes<String> {
    convert::to_json_text(value, "$").map_err(py_error)
}

/// The canonical JSON text of a value.
#[pyfunction]
fn canonical_json(value: &Bound<'_, PyAny>) -> PyRes<String> {
    canonical::canonical_json_of_text(&json_text(value)?).map_err(py_error)
}

/// The canonical JSON text of a JSON text (repeated keys refused).
#[pyfunction]
fn canonical_json_from_text(text: &Bound<'_, PyAny>) -> PyRes<String> {
    canonical::canonical_json_of_text(&str_arg(text, "text")?).map_err(py_error)
}

/// The domain-separated SHA-256 (hex) of a value's canonical JSON.
#[pyfunction]
fn canonical_hash(domain: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyRes<String> {
    let domain = str_arg(domain, "domain")?;
    canonical::canonical_hash_of_text(&domain, &json_text(value)?).map_err(py_error)
}

/// `canonical_hash` of a JSON text.
#[pyfunction]
fn canonical_hash_from_text(domain: &Bound<'_, PyAny>, text: &Bound<'_, PyAny>) -> PyRes<String> {
    let domain = str_arg(domain, "domain")?;
    canonical::canonical_hash_of_text(&domain, &str_arg(text, "text")?).map_err(py_error)
}

/// The bytes `canonical_hash` hashes.
#[pyfunction]
fn canonical_frame<'py>(
    py: Python<'py>,
    domain: &Bound<'py, PyAny>,
    value: &Bound<'py, PyAny>,
) -> PyRes<Bound<'py, PyBytes>> {
    let domain = str_arg(domain, "domain")?;
    let payload = canonical::canonical_json_of_text(&json_text(value)?).map_err(py_error)?;
    let frame = canonical::frame_of_payload(&domain, &payload).map_err(py_error)?;
    Ok(PyBytes::new(py, &frame))
}

/// The semantics hash of a corpus document given as JSON text.
#[pyfunction]
fn semantics_hash_of_text(text: &Bound<'_, PyAny>) -> PyRes<String> {
    let text = str_arg(text, "text")?;
    let doc = canonical::parse(&text).map_err(py_error)?;
    corpus::semantics_hash_of(&doc).map_err(py_error)
}

/// Runs one protocol-v4 vector through the core's runner: `"pass"`, `"skip: <reason>"` or
/// `"fail: <observed>"`.
#[pyfunction]
fn run_vector(vector: &Bound<'_, PyAny>) -> PyRes<String> {
    let wrapped = format!("{{\"vectors\":[{}]}}", json_text(vector)?);
    let doc = canonical::parse(&wrapped).map_err(py_error)?;
    let vectors = corpus::parse_vectors(&doc).map_err(py_error)?;
    Ok(match corpus::run_vector(&vectors[0]) {
        corpus::Outcome::Executed(Ok(())) => "pass".into(),
        corpus::Outcome::Executed(Err(why)) => format!("fail: {why}"),
        corpus::Outcome::Skipped(reason) => format!("skip: {reason}"),
    })
}

/// The ask-threading rules on one send (`asks::check_ask_json`), for the asks vectors.
#[pyfunction]
fn check_ask<'py>(py: Python<'py>, case: &Bound<'py, PyAny>) -> PyRes<Bound<'py, PyAny>> {
    let answer = agent_intercom_core::asks::check_ask_json(&json_text(case)?).map_err(py_error)?;
    parse_answer(py, &answer)
}

fn parse_answer<'py>(py: Python<'py>, text: &str) -> PyRes<Bound<'py, PyAny>> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| fail(ErrorCode::Internal, format!("an answer is not JSON: {e}")))?;
    to_py(py, &value)
}

/// Runs an operation of the core's registry (`contract_operations()`) over plain arguments and
/// returns its value (`None` for none); a refusal raises `ContractError`.
#[pyfunction]
#[pyo3(signature = (op, *args))]
fn contract_call<'py>(
    py: Python<'py>,
    op: &Bound<'py, PyAny>,
    args: &Bound<'py, PyTuple>,
) -> PyRes<Bound<'py, PyAny>> {
    let op = str_arg(op, "op")?;
    let args = convert::to_json_text(args.as_any(), "args").map_err(py_error)?;
    let answer = agent_intercom_core::registry::call_json(&op, &args).map_err(py_error)?;
    let answer: Value = serde_json::from_str(&answer).map_err(|e| {
        fail(
            ErrorCode::Internal,
            format!("a contract answer is not JSON: {e}"),
        )
    })?;
    if answer["ok"] == Value::Bool(true) {
        return match answer.get("value") {
            Some(v) => to_py(py, v),
            None => Ok(py.None().into_bound(py)),
        };
    }
    let failure = &answer["error"];
    let err = ContractError::new_err(failure["message"].as_str().unwrap_or("").to_string());
    let value = err.value(py);
    for (attr, key) in [
        ("cls", "class"),
        ("path", "path"),
        ("detail", "detail"),
        ("code", "code"),
    ] {
        value.setattr(attr, to_py(py, failure.get(key).unwrap_or(&Value::Null))?)?;
    }
    Err(err)
}

/// The name of every contract operation, sorted.
#[pyfunction]
fn contract_operations() -> Vec<&'static str> {
    agent_intercom_core::registry::operations()
}

/// Adds the contract's constants and functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("VERSION", agent_intercom_core::VERSION)?;
    m.add("PROTOCOL_NAME", protocol::PROTOCOL_NAME)?;
    m.add("PROTOCOL_VERSION", protocol::PROTOCOL_VERSION)?;
    m.add("SCOPE_ENV", protocol::SCOPE_ENV)?;
    m.add("SCOPE_ID_PATTERN", protocol::SCOPE_ID_PATTERN_SOURCE)?;
    m.add("VECTOR_SCHEMA_VERSION", protocol::VECTOR_SCHEMA_VERSION)?;
    m.add("SCOPE_A", protocol::SCOPE_A)?;
    m.add("SCOPE_B", protocol::SCOPE_B)?;
    m.add("VECTORS_HASH_DOMAIN", protocol::VECTORS_HASH_DOMAIN)?;
    m.add("SEMANTICS_HASH", corpus::semantics_hash())?;
    m.add("CORPUS_JSON", corpus::CORPUS_JSON)?;
    let codes: Vec<&str> = ErrorCode::all().iter().map(|c| c.as_str()).collect();
    m.add("ERROR_CODES", PyTuple::new(m.py(), codes)?)?;
    m.add("CANONICAL_MAX_DEPTH", canonical::MAX_DEPTH)?;
    m.add("CONTRACT_MAX_DEPTH", convert::MAX_DEPTH)?;
    m.add("FRAME_PREFIX", canonical::FRAME_PREFIX)?;
    m.add("ENCODING_VERSION", canonical::ENCODING_VERSION)?;
    m.add_function(wrap_pyfunction!(parse_scope, m)?)?;
    m.add_function(wrap_pyfunction!(same_scope, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_target, m)?)?;
    m.add_function(wrap_pyfunction!(list_visible, m)?)?;
    m.add_function(wrap_pyfunction!(audience, m)?)?;
    m.add_function(wrap_pyfunction!(narrow, m)?)?;
    m.add_function(wrap_pyfunction!(plan_replacement, m)?)?;
    m.add_function(wrap_pyfunction!(frame_disposition, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_json, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_json_from_text, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_hash, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_hash_from_text, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_frame, m)?)?;
    m.add_function(wrap_pyfunction!(semantics_hash_of_text, m)?)?;
    m.add_function(wrap_pyfunction!(run_vector, m)?)?;
    m.add_function(wrap_pyfunction!(check_ask, m)?)?;
    m.add_function(wrap_pyfunction!(contract_call, m)?)?;
    m.add_function(wrap_pyfunction!(contract_operations, m)?)?;
    Ok(())
}
