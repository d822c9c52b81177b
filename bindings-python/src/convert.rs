//! Python values to JSON and back. Only plain data crosses: `None`, `bool`, `int`, `float`,
//! `str`, `list`/`tuple` and `dict` with `str` keys. Anything else is `UNSUPPORTED_VALUE`, a lone
//! surrogate `UNPAIRED_SURROGATE`, a non-finite float or an integer outside 64 bits
//! `UNSUPPORTED_NUMBER`, nesting past the contract's limit `NESTING_TOO_DEEP`, each naming the
//! path (`$`, `$.key`, `$[0]`). What a value then means is the Rust side's to judge.

use agent_intercom_core::{Error, ErrorCode};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Number, Value};

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

/// Where a value is, built only when a refusal names it.
enum Seg {
    Key(String),
    Index(usize),
}

fn path_of(root: &str, segs: &[Seg]) -> String {
    let mut out = root.to_string();
    for seg in segs {
        match seg {
            Seg::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// A Python value as JSON (see the module docs); `path` names it in refusals.
pub fn to_json(value: &Bound<'_, PyAny>, path: &str) -> Result<Value, Error> {
    let text = to_json_text(value, path)?;
    serde_json::from_str(&text).map_err(|e| {
        Error::new(
            ErrorCode::Internal,
            format!("{path}: written JSON unread: {e}"),
        )
    })
}

/// A Python value as JSON text, written directly (what the canonical and contract calls read).
pub fn to_json_text(value: &Bound<'_, PyAny>, path: &str) -> Result<String, Error> {
    let mut out = String::new();
    let mut segs = Vec::new();
    write(value, &mut out, &mut segs)
        .map_err(|(code, what)| refuse(code, &path_of(path, &segs), &what))?;
    Ok(out)
}

type Refusal = (ErrorCode, String);

fn write_str(out: &mut String, s: &str) {
    // serde_json escapes as JSON.stringify does for every character a str can hold here.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

fn py_text<'a>(s: &'a Bound<'_, PyString>) -> Result<std::borrow::Cow<'a, str>, Refusal> {
    s.to_cow()
        .map_err(|_| (ErrorCode::UnpairedSurrogate, "has a lone surrogate".into()))
}

fn write(value: &Bound<'_, PyAny>, out: &mut String, segs: &mut Vec<Seg>) -> Result<(), Refusal> {
    if segs.len() >= MAX_DEPTH {
        return Err((
            ErrorCode::NestingTooDeep,
            format!("nests deeper than {MAX_DEPTH} levels"),
        ));
    }
    if let Ok(s) = value.cast_exact::<PyString>() {
        write_str(out, &py_text(s)?);
    } else if value.is_none() {
        out.push_str("null");
    } else if let Ok(b) = value.cast::<PyBool>() {
        out.push_str(if b.is_true() { "true" } else { "false" });
    } else if value.is_instance_of::<PyInt>() {
        if let Ok(i) = value.extract::<i64>() {
            out.push_str(&i.to_string());
        } else if let Ok(u) = value.extract::<u64>() {
            out.push_str(&u.to_string());
        } else {
            return Err((
                ErrorCode::UnsupportedNumber,
                "is an integer outside 64 bits".into(),
            ));
        }
    } else if let Ok(f) = value.cast::<PyFloat>() {
        let n = Number::from_f64(f.value()).ok_or((
            ErrorCode::UnsupportedNumber,
            "is not a finite number".to_string(),
        ))?;
        out.push_str(&n.to_string());
    } else if let Ok(s) = value.cast::<PyString>() {
        write_str(out, &py_text(s)?);
    } else if let Ok(dict) = value.cast::<PyDict>() {
        out.push('{');
        for (i, (key, item)) in dict.iter().enumerate() {
            let key = key.cast::<PyString>().map_err(|_| {
                (
                    ErrorCode::UnsupportedValue,
                    "has a key that is not a string".to_string(),
                )
            })?;
            let key = py_text(key)?;
            if i > 0 {
                out.push(',');
            }
            write_str(out, &key);
            out.push(':');
            segs.push(Seg::Key(key.into_owned()));
            write(&item, out, segs)?;
            segs.pop();
        }
        out.push('}');
    } else if let Ok(list) = value.cast::<PyList>() {
        items(list.iter(), out, segs)?;
    } else if let Ok(tuple) = value.cast::<PyTuple>() {
        items(tuple.iter(), out, segs)?;
    } else {
        let type_name = value
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "object".into());
        return Err((
            ErrorCode::UnsupportedValue,
            format!("a {type_name} is not plain JSON data"),
        ));
    }
    Ok(())
}

fn items<'py>(
    iter: impl Iterator<Item = Bound<'py, PyAny>>,
    out: &mut String,
    segs: &mut Vec<Seg>,
) -> Result<(), Refusal> {
    out.push('[');
    for (i, item) in iter.enumerate() {
        if i > 0 {
            out.push(',');
        }
        segs.push(Seg::Index(i));
        write(&item, out, segs)?;
        segs.pop();
    }
    out.push(']');
    Ok(())
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
