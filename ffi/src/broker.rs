//! A broker inside this process (`agent_intercom_broker::embed`).

use std::ffi::{CString, c_char};

use agent_intercom_core::ErrorCode;

use crate::args::{fail, out, text};

/// A broker running inside this process (on its own thread). Create with aic_broker_start,
/// release with aic_broker_free (which stops it first if it still runs).
pub struct aic_broker {
    handle: Option<agent_intercom_broker::BrokerHandle>,
    socket_path: CString,
    gateway_path: CString,
}

ffi_fn! {
    /// Starts the broker of an agent directory in this process. `agent_dir` NULL/empty means
    /// `$PI_CODING_AGENT_DIR` or `~/.pi/agent`. `settings` holds `key=value` lines (newline
    /// separated; e.g. "idle_exit_ms=0\nmax_sessions=1000"), NULL/empty for the defaults.
    /// Fails with AIC_STATUS_BROKER_ALREADY_RUNNING when a live process owns the directory,
    /// AIC_STATUS_BROKER_STORE, AIC_STATUS_BROKER_IO, or AIC_STATUS_INVALID_ARGUMENT for a bad
    /// setting. On success `*out_broker` owns the broker.
    ///
    /// # Safety
    /// Text inputs follow the (pointer, length) contract; `out_broker` valid for writes.
    fn aic_broker_start(
        agent_dir: *const c_char,
        agent_dir_len: usize,
        settings: *const c_char,
        settings_len: usize,
        out_broker: *mut *mut aic_broker,
    ) {
        // SAFETY: forwarded contract.
        let (dir, settings) = unsafe {
            (
                text(agent_dir, agent_dir_len, "agent_dir")?,
                text(settings, settings_len, "settings")?,
            )
        };
        let slot = out(out_broker, "out_broker")?;
        let dir = (!dir.is_empty()).then(|| std::path::Path::new(dir));
        let settings = agent_intercom_broker::embed::settings_lines(settings)?;
        let config = agent_intercom_broker::embed::config(dir, None, settings)?;
        let c_path = |path: &std::path::Path| {
            CString::new(path.display().to_string()).map_err(|_| {
                fail(
                    ErrorCode::InvalidArgument,
                    "the socket path holds a NUL byte",
                )
            })
        };
        let socket_path = c_path(&config.socket_path)?;
        let gateway_path = c_path(&config.gateway_path)?;
        let handle = agent_intercom_broker::embed::start(config)?;
        *slot = Box::into_raw(Box::new(aic_broker {
            handle: Some(handle),
            socket_path,
            gateway_path,
        }));
        Ok(())
    }
}

ffi_fn! {
    /// The broker's socket path, valid until aic_broker_free; "" for NULL.
    ///
    /// # Safety
    /// `broker` must be NULL or a live broker from aic_broker_start.
    unsafe fn aic_broker_socket_path(broker: *const aic_broker) -> *const c_char {
        // SAFETY: by contract.
        match unsafe { broker.as_ref() } {
            Some(b) => b.socket_path.as_ptr(),
            None => static_cstr!(""),
        }
    }
}

ffi_fn! {
    /// The broker's remote-access gateway socket (remote principals register there with an
    /// access credential), valid until aic_broker_free; "" for NULL.
    ///
    /// # Safety
    /// `broker` must be NULL or a live broker from aic_broker_start.
    unsafe fn aic_broker_gateway_path(broker: *const aic_broker) -> *const c_char {
        // SAFETY: by contract.
        match unsafe { broker.as_ref() } {
            Some(b) => b.gateway_path.as_ptr(),
            None => static_cstr!(""),
        }
    }
}

ffi_fn! {
    /// True while the broker runs (false after aic_broker_stop or an idle exit, and for NULL).
    ///
    /// # Safety
    /// `broker` must be NULL or a live broker from aic_broker_start.
    unsafe fn aic_broker_running(broker: *const aic_broker) -> bool {
        // SAFETY: by contract.
        unsafe { broker.as_ref() }
            .is_some_and(|b| b.handle.as_ref().is_some_and(|h| !h.is_finished()))
    }
}

ffi_fn! {
    /// Stops the broker and waits until it removed its files. Stopping twice is harmless.
    ///
    /// # Safety
    /// `broker` must be a live broker from aic_broker_start (not freed).
    fn aic_broker_stop(broker: *mut aic_broker) {
        // SAFETY: by contract.
        let b = unsafe { broker.as_mut() }
            .ok_or_else(|| fail(ErrorCode::NullPointer, "broker is NULL"))?;
        if let Some(handle) = b.handle.take() {
            handle.close();
        }
        Ok(())
    }
}

ffi_fn! {
    /// Stops the broker if it runs, and releases it. NULL is a no-op.
    ///
    /// # Safety
    /// `broker` must be NULL or a broker from aic_broker_start, freed at most once.
    release fn aic_broker_free(broker: *mut aic_broker) {
        // SAFETY: created by Box::into_raw in aic_broker_start.
        drop(unsafe { Box::from_raw(broker) });
    }
}
