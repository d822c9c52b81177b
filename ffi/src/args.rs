//! Converting C arguments: every (pointer, length) pair, out-parameter and candidate array of
//! every export passes these helpers, which check NULL, length and UTF-8 in one place, and
//! [`guard`], which every fallible export runs in (through `ffi_fn!`). A candidate array holds
//! [`aic_candidate`]s, defined here with the helper that reads them ([`sessions`]).

use std::ffi::{CString, c_char};
use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use agent_intercom_core::routing::Session;
use agent_intercom_core::scope::{self, Scope};
use agent_intercom_core::{Error, ErrorCode};

use crate::status::aic_error;

/// A session as routing sees it. Text fields are (pointer, length) UTF-8 and follow the
/// (pointer, length) conventions at the top of this header, lengths above PTRDIFF_MAX included.
/// `name` NULL (with `name_len` 0) means the session has no name, unlike "" which is a name.
/// `scope` NULL or empty means unscoped; any other scope must be a valid scope id.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct aic_candidate {
    /// Full session id.
    pub id: *const c_char,
    /// Length of `id` in bytes.
    pub id_len: usize,
    /// Name, or NULL (with length 0) for none.
    pub name: *const c_char,
    /// Length of `name` in bytes.
    pub name_len: usize,
    /// Scope id, or NULL/empty for unscoped.
    pub scope: *const c_char,
    /// Length of `scope` in bytes.
    pub scope_len: usize,
}

pub(crate) fn fail(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::new(code, message)
}

/// Runs `body`, catching panics and reporting failures through `err`.
pub(crate) fn guard(
    err: *mut *mut aic_error,
    body: impl FnOnce() -> Result<(), Error>,
) -> ErrorCode {
    if !err.is_null() {
        // SAFETY: the caller promises `err` is NULL or valid for writes.
        unsafe { *err = ptr::null_mut() };
    }
    let result = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| {
        Err(fail(
            ErrorCode::Internal,
            "internal error: a panic was caught at the C boundary",
        ))
    });
    match result {
        Ok(()) => ErrorCode::Ok,
        Err(error) => {
            let code = error.code();
            if !err.is_null() {
                let message =
                    CString::new(error.message().replace('\0', "\\0")).unwrap_or_default();
                // SAFETY: as above.
                unsafe { *err = Box::into_raw(Box::new(aic_error::new(code, message))) };
            }
            code
        }
    }
}

/// Checks a (pointer, length) pair from C before it may become a slice: the one place every input
/// and output buffer of every export passes. Ok(true) when a slice may be formed, Ok(false) for
/// NULL with length 0 (the empty input).
///
/// A byte size above PTRDIFF_MAX (isize::MAX) describes no C object, and forming such a slice is
/// undefined behaviour in Rust even if nothing is read, so it is refused first, whatever the
/// pointer. Misalignment is the other slice precondition a C caller can break.
pub(crate) fn check_pair<T>(ptr: *const T, len: usize, what: &str) -> Result<bool, Error> {
    let size = size_of::<T>().max(1);
    if len > isize::MAX as usize / size {
        let unit = if size == 1 {
            " bytes".to_string()
        } else {
            format!(" elements of {size} bytes")
        };
        return Err(fail(
            ErrorCode::InvalidArgument,
            format!("{what} has a length of {len}{unit}, more than PTRDIFF_MAX bytes"),
        ));
    }
    if ptr.is_null() {
        return if len == 0 {
            Ok(false)
        } else {
            Err(fail(
                ErrorCode::NullPointer,
                format!("{what} is NULL with a non-zero length"),
            ))
        };
    }
    if !ptr.is_aligned() {
        return Err(fail(
            ErrorCode::InvalidArgument,
            format!("{what} is not aligned for its element type"),
        ));
    }
    Ok(true)
}

/// Borrows a C input array of `len` elements (see check_pair).
///
/// # Safety
/// A non-NULL `ptr` must be valid for reads of `len` elements for `'a`.
pub(crate) unsafe fn c_slice<'a, T>(
    ptr: *const T,
    len: usize,
    what: &str,
) -> Result<&'a [T], Error> {
    Ok(if check_pair(ptr, len, what)? {
        // SAFETY: size, NULL and alignment checked; readable by the caller's contract.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    } else {
        &[]
    })
}

/// Borrows a C output buffer of `len` elements, possibly uninitialised (see check_pair).
///
/// # Safety
/// A non-NULL `ptr` must be valid for writes of `len` elements for `'a`.
pub(crate) unsafe fn c_slice_out<'a, T>(
    ptr: *mut T,
    len: usize,
    what: &str,
) -> Result<&'a mut [MaybeUninit<T>], Error> {
    Ok(if check_pair(ptr.cast_const(), len, what)? {
        // SAFETY: as c_slice; MaybeUninit because C buffers need not be initialised.
        unsafe { std::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<T>>(), len) }
    } else {
        &mut []
    })
}

/// Borrows a (pointer, length) UTF-8 input. NULL with length 0 is the empty string.
///
/// # Safety
/// `ptr` must be NULL or valid for reads of `len` bytes for the duration of the call.
pub(crate) unsafe fn text<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<&'a str, Error> {
    // SAFETY: forwarded contract.
    let bytes = unsafe { c_slice(ptr.cast::<u8>(), len, what)? };
    std::str::from_utf8(bytes).map_err(|e| {
        fail(
            ErrorCode::InvalidUtf8,
            format!(
                "{what} is not valid UTF-8 (invalid byte at offset {})",
                e.valid_up_to()
            ),
        )
    })
}

/// Parses a scope input: NULL or empty is unscoped.
pub(crate) unsafe fn scope_arg<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<Scope<'a>, Error> {
    // SAFETY: forwarded contract.
    let value = unsafe { text(ptr, len, what)? };
    scope::parse_scope(Some(value), what)
}

pub(crate) fn out<'a, T>(ptr: *mut T, what: &str) -> Result<&'a mut T, Error> {
    // SAFETY: non-NULL out-pointers are valid for writes by contract.
    unsafe { ptr.as_mut() }.ok_or_else(|| fail(ErrorCode::NullPointer, format!("{what} is NULL")))
}

/// Converts a candidate array into sessions.
pub(crate) unsafe fn sessions<'a>(
    candidates: *const aic_candidate,
    count: usize,
) -> Result<Vec<Session<'a>>, Error> {
    // SAFETY: the caller promises `count` readable elements.
    let items = unsafe { c_slice(candidates, count, "candidates")? };
    items
        .iter()
        .enumerate()
        .map(|(i, c)| {
            // SAFETY: each field pair follows the (pointer, length) contract.
            unsafe {
                let id = text(c.id, c.id_len, &format!("candidates[{i}].id"))?;
                // NULL with length 0 is no name; any other pair is text, checked as such.
                let name = if c.name.is_null() && c.name_len == 0 {
                    None
                } else {
                    Some(text(c.name, c.name_len, &format!("candidates[{i}].name"))?)
                };
                let scope = scope_arg(c.scope, c.scope_len, &format!("candidates[{i}].scope"))?;
                Ok(Session { id, name, scope })
            }
        })
        .collect()
}

/// Writes the matching indices: up to `capacity` to `out_indices`, and their number to
/// `out_count`. The buffer is checked like an input (see check_pair) before anything is written,
/// so a NULL buffer with a non-zero capacity is refused even when there is nothing to write.
pub(crate) fn write_indices(
    found: &[usize],
    out_indices: *mut usize,
    capacity: usize,
    out_count: *mut usize,
) -> Result<(), Error> {
    let count = out(out_count, "out_count")?;
    // SAFETY: the caller promises `capacity` writable elements.
    let dest = unsafe { c_slice_out(out_indices, capacity, "out_indices")? };
    for (slot, &index) in dest.iter_mut().zip(found) {
        slot.write(index);
    }
    *count = found.len();
    Ok(())
}

pub(crate) fn owned_string(
    value: String,
    out_str: *mut *mut c_char,
    out_len: *mut usize,
) -> Result<(), Error> {
    let slot = out(out_str, "out_json")?;
    let len = value.len();
    let c = CString::new(value).map_err(|_| fail(ErrorCode::Internal, "output held a NUL byte"))?;
    if !out_len.is_null() {
        // SAFETY: non-NULL out-pointer.
        unsafe { *out_len = len };
    }
    *slot = c.into_raw();
    Ok(())
}
