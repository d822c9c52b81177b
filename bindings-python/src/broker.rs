//! The broker from Python: `start_broker` (run it in this process), `ensure_broker` (use the
//! running one or start it here, race-free: `agent_intercom_broker::ensure`) and the `Broker`
//! handle. A broker started here keeps running until `Broker.close()`, idle exit or the
//! interpreter's exit (the package closes them `atexit`), even when the caller drops the handle.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_intercom_broker::{BrokerConfig, BrokerHandle, Ensured, StopReason};
use agent_intercom_core::ErrorCode;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::contract::{ms_arg, str_arg, u64_arg};
use crate::convert::to_json;
use crate::{PyRes, fail, py_error};

type Slot = Arc<Mutex<Option<BrokerHandle>>>;

/// Every broker this process started, so dropping a handle never stops one.
static STARTED: Mutex<Vec<Slot>> = Mutex::new(Vec::new());

/// A broker running in this process (on its own thread).
#[pyclass(module = "agent_intercom")]
pub struct Broker {
    slot: Slot,
    #[pyo3(get)]
    socket_path: String,
    #[pyo3(get)]
    gateway_path: String,
    #[pyo3(get)]
    intercom_dir: String,
}

#[pymethods]
impl Broker {
    /// Stops the broker and waits until its files are removed. Returns why it stopped, or
    /// `"already_stopped"` when it was closed before.
    fn close(&self, py: Python<'_>) -> &'static str {
        let handle = self
            .slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match handle {
            Some(handle) => py.detach(|| handle.close().as_str()),
            None => StopReason::ALREADY_STOPPED,
        }
    }

    /// True until the broker stops (close, idle exit).
    #[getter]
    fn running(&self) -> bool {
        self.slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(|h| !h.is_finished())
    }

    fn __repr__(&self) -> String {
        format!("Broker(socket_path={:?})", self.socket_path)
    }
}

impl Broker {
    fn new(handle: BrokerHandle, config: &BrokerConfig) -> Broker {
        let slot = Arc::new(Mutex::new(Some(handle)));
        STARTED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(slot.clone());
        Broker {
            slot,
            socket_path: config.socket_path.display().to_string(),
            gateway_path: config.gateway_path.display().to_string(),
            intercom_dir: config.intercom_dir.display().to_string(),
        }
    }
}

/// Closes every broker this process started (the package calls it `atexit`).
#[pyfunction]
fn _close_brokers(py: Python<'_>) {
    let slots: Vec<Slot> =
        std::mem::take(&mut *STARTED.lock().unwrap_or_else(PoisonError::into_inner));
    py.detach(|| {
        for slot in slots {
            if let Some(h) = slot.lock().unwrap_or_else(PoisonError::into_inner).take() {
                h.close();
            }
        }
    });
}

/// A path argument: a non-empty `str` or `os.PathLike`.
pub fn path_arg(value: Option<&Bound<'_, PyAny>>, name: &str) -> PyRes<Option<PathBuf>> {
    let Some(v) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let path: PathBuf = if v.is_instance_of::<PyString>() {
        PathBuf::from(str_arg(v, name)?)
    } else {
        v.extract::<PathBuf>().map_err(|_| {
            fail(
                ErrorCode::InvalidArgument,
                format!("{name} must be a non-empty str or path"),
            )
        })?
    };
    if path.as_os_str().is_empty() {
        return Err(fail(
            ErrorCode::InvalidArgument,
            format!("{name} must be a non-empty str or path"),
        ));
    }
    Ok(Some(path))
}

/// `key=value` pairs for `BrokerConfig::set`, which parses and range-checks every value.
fn setting_pairs(
    idle_exit_ms: Option<&Bound<'_, PyAny>>,
    log_level: Option<&Bound<'_, PyAny>>,
    settings: Option<&Bound<'_, PyAny>>,
) -> PyRes<Vec<(String, String)>> {
    use agent_intercom_broker::config;
    let mut pairs = Vec::new();
    if let Some(v) = idle_exit_ms.filter(|v| !v.is_none()) {
        pairs.push((
            config::IDLE_EXIT_MS_KEY.to_string(),
            u64_arg(v, "idle_exit_ms")?.to_string(),
        ));
    }
    if let Some(v) = log_level.filter(|v| !v.is_none()) {
        pairs.push((config::LOG_LEVEL_KEY.to_string(), str_arg(v, "log_level")?));
    }
    if let Some(v) = settings.filter(|v| !v.is_none()) {
        let dict = v.cast::<PyDict>().map_err(|_| {
            fail(
                ErrorCode::InvalidArgument,
                "settings must be a dict of limits",
            )
        })?;
        for (key, value) in dict.iter() {
            let key = str_arg(&key, "a settings key")?;
            let text = match to_json(&value, &format!("settings.{key}")).map_err(py_error)? {
                serde_json::Value::String(s) => s,
                serde_json::Value::Number(n) => n.to_string(),
                _ => {
                    return Err(fail(
                        ErrorCode::InvalidArgument,
                        format!("settings.{key} must be a number or a str"),
                    ));
                }
            };
            pairs.push((key, text));
        }
    }
    Ok(pairs)
}

fn broker_config(
    agent_dir: Option<&Bound<'_, PyAny>>,
    socket_path: Option<&Bound<'_, PyAny>>,
    pairs: &[(String, String)],
) -> PyRes<BrokerConfig> {
    let agent_dir = path_arg(agent_dir, "agent_dir")?;
    let socket_path = path_arg(socket_path, "socket_path")?;
    agent_intercom_broker::embed::config(
        agent_dir.as_deref(),
        socket_path.as_deref(),
        pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    )
    .map_err(py_error)
}

/// The socket of the broker of `agent_dir` (`None`: from the environment) or `socket_path`.
pub fn socket_of(
    agent_dir: Option<&Bound<'_, PyAny>>,
    socket_path: Option<&Bound<'_, PyAny>>,
) -> PyRes<PathBuf> {
    if let Some(socket) = path_arg(socket_path, "socket_path")? {
        return Ok(socket);
    }
    let dir = path_arg(agent_dir, "agent_dir")?
        .unwrap_or_else(agent_intercom_broker::config::agent_dir_from_env);
    Ok(BrokerConfig::for_agent_dir(Path::new(&dir)).socket_path)
}

/// Starts the broker of an agent directory in this process.
#[pyfunction]
#[pyo3(signature = (
    agent_dir = None, *, socket_path = None, idle_exit_ms = None, log_level = None,
    settings = None,
))]
fn start_broker(
    py: Python<'_>,
    agent_dir: Option<&Bound<'_, PyAny>>,
    socket_path: Option<&Bound<'_, PyAny>>,
    idle_exit_ms: Option<&Bound<'_, PyAny>>,
    log_level: Option<&Bound<'_, PyAny>>,
    settings: Option<&Bound<'_, PyAny>>,
) -> PyRes<Broker> {
    let pairs = setting_pairs(idle_exit_ms, log_level, settings)?;
    let config = broker_config(agent_dir, socket_path, &pairs)?;
    let handle = py
        .detach(|| agent_intercom_broker::embed::start(config.clone()))
        .map_err(py_error)?;
    Ok(Broker::new(handle, &config))
}

/// Uses the running broker of the agent directory or starts one in this process, waiting up to
/// `wait_ms` for another starter. Returns `{"started", "socket_path", "broker"}` (`broker` the
/// handle when this call started it, else `None`).
#[pyfunction]
#[pyo3(signature = (
    agent_dir = None, *, socket_path = None, idle_exit_ms = None, log_level = None,
    settings = None, wait_ms = None,
))]
#[allow(clippy::too_many_arguments)]
fn ensure_broker<'py>(
    py: Python<'py>,
    agent_dir: Option<&Bound<'py, PyAny>>,
    socket_path: Option<&Bound<'py, PyAny>>,
    idle_exit_ms: Option<&Bound<'py, PyAny>>,
    log_level: Option<&Bound<'py, PyAny>>,
    settings: Option<&Bound<'py, PyAny>>,
    wait_ms: Option<&Bound<'py, PyAny>>,
) -> PyRes<Bound<'py, PyDict>> {
    let pairs = setting_pairs(idle_exit_ms, log_level, settings)?;
    let config = broker_config(agent_dir, socket_path, &pairs)?;
    let default = Duration::from_millis(agent_intercom_broker::config::DEFAULT_ENSURE_WAIT_MS);
    let wait = ms_arg(wait_ms, "wait_ms", default)?;
    let ensured = py
        .detach(|| agent_intercom_broker::ensure(config.clone(), wait))
        .map_err(|e| py_error(agent_intercom_broker::embed::start_error(&e)))?;
    let out = PyDict::new(py);
    out.set_item("socket_path", config.socket_path.display().to_string())?;
    match ensured {
        Ensured::Started(handle) => {
            out.set_item("started", true)?;
            out.set_item("broker", Bound::new(py, Broker::new(handle, &config))?)?;
        }
        Ensured::Running(_) => {
            out.set_item("started", false)?;
            out.set_item("broker", py.None())?;
        }
    }
    Ok(out)
}

/// Adds the broker's functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Broker>()?;
    m.add_function(wrap_pyfunction!(start_broker, m)?)?;
    m.add_function(wrap_pyfunction!(ensure_broker, m)?)?;
    m.add_function(wrap_pyfunction!(_close_brokers, m)?)?;
    m.add(
        "ANSWER_TIMEOUT_MS",
        agent_intercom_broker::client::ANSWER_TIMEOUT.as_millis() as u64,
    )?;
    Ok(())
}
