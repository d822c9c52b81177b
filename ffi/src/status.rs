//! Versions, status names, errors and owned strings.

use std::ffi::{CString, c_char};
use std::sync::LazyLock;

use agent_intercom_core::ErrorCode;

use crate::AIC_ABI_VERSION;

/// Details of a failed call: a stable code and a message. Release with aic_error_free().
pub struct aic_error {
    code: ErrorCode,
    message: CString,
}

impl aic_error {
    pub(crate) fn new(code: ErrorCode, message: CString) -> aic_error {
        aic_error { code, message }
    }
}

ffi_fn! {
    /// The library version, e.g. "0.1.0". Static.
    fn aic_version() -> *const c_char {
        static_cstr!(agent_intercom_core::VERSION)
    }
}

ffi_fn! {
    /// The ABI version (AIC_ABI_VERSION of the library actually loaded).
    fn aic_abi_version() -> u32 {
        AIC_ABI_VERSION
    }
}

ffi_fn! {
    /// The stable name of a status ("OK", "INVALID_SCOPE", ...), or "UNKNOWN". Static.
    fn aic_status_name(status: u32) -> *const c_char {
        static NAMES: LazyLock<Vec<CString>> = LazyLock::new(|| {
            ErrorCode::all()
                .iter()
                .map(|c| CString::new(c.as_str()).unwrap())
                .collect()
        });
        match ErrorCode::from_u32(status) {
            Some(code) => NAMES[code as usize].as_ptr(),
            None => static_cstr!("UNKNOWN"),
        }
    }
}

ffi_fn! {
    /// The status of an error; AIC_STATUS_NULL_POINTER for NULL.
    ///
    /// # Safety
    /// `err` must be NULL or an error returned by this library and not yet freed.
    unsafe fn aic_error_code(err: *const aic_error) -> ErrorCode {
        // SAFETY: by contract.
        unsafe { err.as_ref() }.map_or(ErrorCode::NullPointer, |e| e.code)
    }
}

ffi_fn! {
    /// The message of an error, valid until aic_error_free(err); "" for NULL. Messages never
    /// contain a rejected scope id.
    ///
    /// # Safety
    /// `err` must be NULL or an error returned by this library and not yet freed.
    unsafe fn aic_error_message(err: *const aic_error) -> *const c_char {
        // SAFETY: by contract.
        match unsafe { err.as_ref() } {
            Some(e) => e.message.as_ptr(),
            None => static_cstr!(""),
        }
    }
}

ffi_fn! {
    /// Releases an error. NULL is a no-op.
    ///
    /// # Safety
    /// `err` must be NULL or an error returned by this library, freed at most once.
    release fn aic_error_free(err: *mut aic_error) {
        // SAFETY: created by Box::into_raw in guard().
        drop(unsafe { Box::from_raw(err) });
    }
}

ffi_fn! {
    /// Releases a string returned by this library. NULL is a no-op.
    ///
    /// # Safety
    /// `s` must be NULL or a `char *` returned by this library, freed at most once.
    release fn aic_string_free(s: *mut c_char) {
        // SAFETY: created by CString::into_raw in owned_string().
        drop(unsafe { CString::from_raw(s) });
    }
}
