//! The scratchpad store (`agent_intercom_scratchpad::api`).

use std::ffi::c_char;

use agent_intercom_core::ErrorCode;

use crate::args::{fail, out, owned_string, text};

/// A scratchpad store (one SQLite database, shared safely with other processes). Open with
/// aic_pad_open, use with aic_pad_request (from any thread; calls on one handle are serialised),
/// release with aic_pad_free.
pub struct aic_pad {
    store: std::sync::Mutex<agent_intercom_scratchpad::Store>,
}

ffi_fn! {
    /// Opens (creating if needed) the scratchpad store at `path`. `options_json` is NULL/empty for
    /// the defaults, or a JSON object with any of per_project_cap, per_recipient_cap,
    /// max_content_bytes, allow_full_export. Fails with AIC_STATUS_STORE_NEWER_SCHEMA,
    /// AIC_STATUS_STORE_CORRUPT (the file is left untouched), AIC_STATUS_STORE_IO, or
    /// AIC_STATUS_UNKNOWN_KEY / AIC_STATUS_INVALID_ARGUMENT / AIC_STATUS_INVALID_JSON for bad
    /// options. On success `*out_pad` owns the store.
    ///
    /// # Safety
    /// Text inputs follow the (pointer, length) contract; `out_pad` valid for writes.
    fn aic_pad_open(
        path: *const c_char,
        path_len: usize,
        options_json: *const c_char,
        options_len: usize,
        out_pad: *mut *mut aic_pad,
    ) {
        // SAFETY: forwarded contract.
        let (path, options) = unsafe {
            (
                text(path, path_len, "path")?,
                text(options_json, options_len, "options_json")?,
            )
        };
        let slot = out(out_pad, "out_pad")?;
        if path.is_empty() {
            return Err(fail(ErrorCode::InvalidArgument, "path is empty"));
        }
        let options = agent_intercom_scratchpad::api::parse(Some(options), "options_json")?;
        let config = agent_intercom_scratchpad::api::config(&options)?;
        let store = agent_intercom_scratchpad::Store::open(
            std::path::Path::new(path),
            config,
            std::sync::Arc::new(agent_intercom_scratchpad::SystemClock),
        )?;
        *slot = Box::into_raw(Box::new(aic_pad {
            store: std::sync::Mutex::new(store),
        }));
        Ok(())
    }
}

ffi_fn! {
    /// One scratchpad operation: `op` is one of register, post, unread, list, task.create,
    /// task.get, task.transition, task.history, task.artifact, task.artifacts, rate.take,
    /// cost.record, cost.list, export, events, or a rule check (check.visible, check.ttl,
    /// check.transition, check.addressing, check.redact, check.rate, check.task_read) which needs
    /// no store (`pad` may then be NULL). `args_json` is a JSON object (NULL/empty for none); see
    /// docs/scratchpad.md. On success the result is written as JSON to `*out_json` (release with
    /// aic_string_free). Refusals carry stable codes: AIC_STATUS_INVALID_TTL,
    /// AIC_STATUS_PRIVATE_WITHOUT_RECIPIENT, AIC_STATUS_CONTENT_TOO_LARGE,
    /// AIC_STATUS_INVALID_TRANSITION, AIC_STATUS_NOT_FOUND, AIC_STATUS_FORBIDDEN,
    /// AIC_STATUS_UNKNOWN_KEY (an argument the operation does not take),
    /// AIC_STATUS_UNPAIRED_SURROGATE, AIC_STATUS_INVALID_ARGUMENT, AIC_STATUS_STORE_IO ...; a
    /// refused operation changes nothing. rate.take reads unnamed limits from
    /// LEAN_CTX_RATE_LIMIT_*_PER_MIN (or LCTX_...).
    ///
    /// # Safety
    /// `pad` must be NULL or a live store from aic_pad_open; text inputs follow the (pointer,
    /// length) contract; `out_json` and `out_len` valid for writes (`out_len` may be NULL).
    fn aic_pad_request(
        pad: *const aic_pad,
        op: *const c_char,
        op_len: usize,
        args_json: *const c_char,
        args_len: usize,
        out_json: *mut *mut c_char,
        out_len: *mut usize,
    ) {
        // SAFETY: forwarded contract.
        let (op, args) = unsafe {
            (
                text(op, op_len, "op")?,
                text(args_json, args_len, "args_json")?,
            )
        };
        out(out_json, "out_json")?;
        let args = agent_intercom_scratchpad::api::parse(Some(args), "args_json")?;
        // SAFETY: by contract.
        let pad = unsafe { pad.as_ref() };
        // A panic while holding the lock cannot leave a transaction half-applied (SQLite rolls
        // it back), so a poisoned lock is still safe to use.
        let mut store = pad.map(|p| {
            p.store
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        });
        let result = agent_intercom_scratchpad::api::request(
            store.as_deref_mut(),
            op,
            &args,
            &agent_intercom_scratchpad::api::process_env,
            || fail(ErrorCode::NullPointer, "pad is NULL"),
        )?;
        owned_string(result.to_string(), out_json, out_len)
    }
}

ffi_fn! {
    /// Closes the store and releases it. NULL is a no-op.
    ///
    /// # Safety
    /// `pad` must be NULL or a store from aic_pad_open, released at most once, with no call on it
    /// in flight.
    release fn aic_pad_free(pad: *mut aic_pad) {
        // SAFETY: created by Box::into_raw in aic_pad_open.
        drop(unsafe { Box::from_raw(pad) });
    }
}

ffi_fn! {
    /// The former name of aic_pad_free, kept for one release: every handle is released by its
    /// `_free` function.
    ///
    /// # Safety
    /// As aic_pad_free.
    release fn aic_pad_close(pad: *mut aic_pad) {
        // SAFETY: created by Box::into_raw in aic_pad_open.
        drop(unsafe { Box::from_raw(pad) });
    }
}
