//! The scratchpad: a store opened by this process (`_Pad`, wrapped by the package's
//! `Scratchpad`), the rule checks that need no store, and the default store's path. Every
//! operation and check is `agent_intercom_scratchpad::api`'s, with its argument checks (unknown
//! keys refused): the same as the CLI, C and Node.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_intercom_core::{Error, ErrorCode};
use agent_intercom_scratchpad::api;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::broker::path_arg;
use crate::contract::str_arg;
use crate::convert::{to_json, to_py};
use crate::{PyRes, fail, py_error};

/// Arguments or options: a `dict` (or `None`, none) of plain data.
fn args_of(value: Option<&Bound<'_, PyAny>>, what: &str) -> PyRes<Value> {
    match value.filter(|v| !v.is_none()) {
        None => Ok(Value::Null),
        Some(v) if v.is_instance_of::<PyDict>() => to_json(v, what).map_err(py_error),
        Some(_) => Err(fail(
            ErrorCode::InvalidArgument,
            format!("{what} must be a dict"),
        )),
    }
}

/// A store opened by this process.
#[pyclass(module = "agent_intercom")]
pub struct Pad {
    store: Arc<Mutex<Option<agent_intercom_scratchpad::Store>>>,
}

#[pymethods]
impl Pad {
    /// One operation (or rule check) by name; returns its result.
    #[pyo3(signature = (op, args = None))]
    fn request<'py>(
        &self,
        py: Python<'py>,
        op: &Bound<'py, PyAny>,
        args: Option<&Bound<'py, PyAny>>,
    ) -> PyRes<Bound<'py, PyAny>> {
        let op = str_arg(op, "op")?;
        let args = args_of(args, "args")?;
        let store = self.store.clone();
        let result = py.detach(move || {
            let mut store = store.lock().unwrap_or_else(PoisonError::into_inner);
            api::request(store.as_mut(), &op, &args, &api::process_env, || {
                Error::new(ErrorCode::InvalidArgument, "the scratchpad is closed")
            })
        });
        to_py(py, &result.map_err(py_error)?)
    }

    /// Closes the store; later requests fail. Closing twice is harmless.
    fn close(&self) {
        self.store
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }

    /// True after close().
    #[getter]
    fn closed(&self) -> bool {
        self.store
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none()
    }
}

/// Opens (creating it and its directory if needed) the store at `path`; `options` as the
/// store's (`per_project_cap`, ...: `api::OPTION_KEYS`), another key `UNKNOWN_KEY`.
#[pyfunction]
#[pyo3(signature = (path, options = None))]
fn open_pad(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    options: Option<&Bound<'_, PyAny>>,
) -> PyRes<Pad> {
    let path: PathBuf = path_arg(Some(path), "path")?.unwrap_or_default();
    let config = api::config(&args_of(options, "options")?).map_err(py_error)?;
    let store = py.detach(|| {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                Error::new(
                    ErrorCode::StoreIo,
                    format!("cannot create {}: {e}", dir.display()),
                )
            })?;
        }
        agent_intercom_scratchpad::Store::open(
            &path,
            config,
            Arc::new(agent_intercom_scratchpad::SystemClock),
        )
    });
    Ok(Pad {
        store: Arc::new(Mutex::new(Some(store.map_err(py_error)?))),
    })
}

/// A rule check (`check.*`), which needs no store.
#[pyfunction]
#[pyo3(signature = (op, args = None))]
fn check_rule<'py>(
    py: Python<'py>,
    op: &Bound<'py, PyAny>,
    args: Option<&Bound<'py, PyAny>>,
) -> PyRes<Bound<'py, PyAny>> {
    let op = str_arg(op, "op")?;
    if !api::CHECKS.contains(&op.as_str()) {
        return Err(fail(
            ErrorCode::InvalidArgument,
            format!(
                "{op:?} is not a rule check; checks: {}",
                api::CHECKS.join(", ")
            ),
        ));
    }
    let result = api::check(&op, &args_of(args, "args")?).map_err(py_error)?;
    to_py(py, &result)
}

/// The default store: the variable `paths::PATH_ENV` names, else the file in the agent
/// directory (`agent_intercom_scratchpad::default_path`).
#[pyfunction]
fn default_scratchpad_path() -> String {
    agent_intercom_scratchpad::default_path(
        &api::process_env,
        agent_intercom_broker::config::agent_dir_from_env,
    )
    .display()
    .to_string()
}

/// Adds the scratchpad's functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Pad>()?;
    m.add_function(wrap_pyfunction!(open_pad, m)?)?;
    m.add_function(wrap_pyfunction!(check_rule, m)?)?;
    m.add_function(wrap_pyfunction!(default_scratchpad_path, m)?)?;
    m.add("PAD_OPERATIONS", api::OPERATIONS.to_vec())?;
    m.add("PAD_CHECKS", api::CHECKS.to_vec())?;
    m.add("PAD_OPTION_KEYS", api::OPTION_KEYS.to_vec())?;
    Ok(())
}
