//! PyO3 extension behind the `agent-intercom` Python package (`agent_intercom._native`): converts
//! Python arguments, calls the Rust crates, converts back. No rule lives here or in the Python
//! package; it mirrors the N-API addon (bindings-node/src). A failure is raised as
//! `IntercomError`, whose `code` is the core's stable [`ErrorCode`] name and whose message is the
//! core's; a contract operation's refusal is a `ContractError` (class, path, detail, code).

use agent_intercom_core::{Error, ErrorCode};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

mod broker;
mod client;
mod contract;
mod convert;
mod message;
mod pad;
mod session;

create_exception!(
    agent_intercom,
    IntercomError,
    PyException,
    "A failure with a stable `code` (the core's ErrorCode name) and a `message`."
);
create_exception!(
    agent_intercom,
    ContractError,
    PyException,
    "A contract operation's refusal: `cls` (the TypeScript class), `path`, `detail`, `code`."
);

/// The Python exception of a core error: `IntercomError` with `code` and `message` set.
pub fn py_error(error: Error) -> PyErr {
    Python::attach(|py| {
        let err = IntercomError::new_err(error.message().to_string());
        let value = err.value(py);
        // Setting attributes on a fresh exception instance cannot fail short of memory.
        let _ = value.setattr("code", error.code().as_str());
        let _ = value.setattr("message", error.message());
        // Set by a delivery failure only; present on every IntercomError.
        let _ = value.setattr("accepted", py.None());
        let _ = value.setattr("message_id", py.None());
        err
    })
}

/// A core error from a code and message.
pub fn fail(code: ErrorCode, message: impl Into<String>) -> PyErr {
    py_error(Error::new(code, message))
}

/// What every fallible function returns.
pub type PyRes<T> = PyResult<T>;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("IntercomError", py.get_type::<IntercomError>())?;
    m.add("ContractError", py.get_type::<ContractError>())?;
    contract::register(m)?;
    broker::register(m)?;
    client::register(m)?;
    pad::register(m)?;
    Ok(())
}
