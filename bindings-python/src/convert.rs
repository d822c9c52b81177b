//! Python values to JSON and back. Only plain data crosses: `None`, `bool`, `int`, `float`,
//! `str`, `list`/`tuple` and `dict` with `str` keys. Anything else is `UNSUPPORTED_VALUE`, a lone
//! surrogate `UNPAIRED_SURROGATE`, a non-finite float or an integer outside 64 bits
//! `UNSUPPORTED_NUMBER`, nesting past the contract's limit `NESTING_TOO_DEEP`, each naming the
//! path (`$`, `$.key`, `$[0]`). What a value then means is the Rust side's to judge.

use agent_intercom_core::{Error, ErrorCode};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// The deepest nesting accepted (the value itself is depth 1), the contract's limit.
pub const MAX_DEPTH: usize = agent_intercom_core::contract::value::MAX_PARSE_DEPTH;

fn refuse(code: ErrorCode, path: &str, what: &str) -> Error {
    Error::new(code, format!("{path}: {what}"))
}

/// A Python `str` as Rust text (`UNPAIRED_SURROGATE` for a lone surrogate).
pub fn text(value: &Bound<'_, PyString>, path: &str) -> Result<String, Error> {
    value
        .to_cow()
        .map(|c| c.into_owned())
        .map_err(|_| refuse(ErrorCode::UnpairedSurrogate, path, "has a lone surrogate"))
}

/// A Python value as JSON (see the module docs); `path` names it in refusals.
pub fn to_json(value: &Bound<'_, PyAny>, path: &str) -> Result<Value, Error> {
    convert(value, path, 1)
}

fn convert(value: &Bound<'_, PyAny>, path: &str, depth: usize) -> Result<Value, Error> {
    if depth > MAX_DEPTH {
        return Err(refuse(
            ErrorCode::NestingTooDeep,
            path,
            &format!("nests deeper than {MAX_DEPTH} levels"),
        ));
    }
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if value.is_instance_of::<PyInt>() {
        if let Ok(i) = value.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = value.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(refuse(
            ErrorCode::UnsupportedNumber,
            path,
            "is an integer outside 64 bits",
        ));
    }
    if let Ok(f) = value.cast::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| refuse(ErrorCode::UnsupportedNumber, path, "is not a finite number"));
    }
    if let Ok(s) = value.cast::<PyString>() {
        return text(s, path).map(Value::String);
    }
    if let Ok(list) = value.cast::<PyList>() {
        return items(list.iter(), path, depth);
    }
    if let Ok(tuple) = value.cast::<PyTuple>() {
        return items(tuple.iter(), path, depth);
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut map = Map::new();
        for (key, item) in dict.iter() {
            let key = key.cast::<PyString>().map_err(|_| {
                refuse(
                    ErrorCode::UnsupportedValue,
                    path,
                    "has a key that is not a string",
                )
            })?;
            let key = text(key, path)?;
            let at = format!("{path}.{key}");
            let item = convert(&item, &at, depth + 1)?;
            map.insert(key, item);
        }
        return Ok(Value::Object(map));
    }
    let type_name = value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into());
    Err(refuse(
        ErrorCode::UnsupportedValue,
        path,
        &format!("a {type_name} is not plain JSON data"),
    ))
}

fn items<'py>(
    iter: impl Iterator<Item = Bound<'py, PyAny>>,
    path: &str,
    depth: usize,
) -> Result<Value, Error> {
    iter.enumerate()
        .map(|(i, item)| convert(&item, &format!("{path}[{i}]"), depth + 1))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// JSON as a Python value (objects as `dict`, arrays as `list`).
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.into_pyobject(py)?.into_any(),
            (_, Some(u), _) => u.into_pyobject(py)?.into_any(),
            (_, _, f) => PyFloat::new(py, f.unwrap_or(f64::NAN)).into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}
