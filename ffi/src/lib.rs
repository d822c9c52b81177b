//! The C ABI of agent-intercom. Every function here only converts C arguments, calls
//! `agent_intercom_core`, and converts the answer back; the rules live in the core.
//!
//! See `include/agent_intercom.h` (generated from this file) for the conventions: status codes,
//! (pointer, length) UTF-8 inputs, ownership of outputs, and the ABI stability policy.

#![allow(non_camel_case_types)]

use std::ffi::{CString, c_char};
use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::LazyLock;

use agent_intercom_core::canonical;
use agent_intercom_core::corpus;
use agent_intercom_core::protocol;
use agent_intercom_core::routing::{
    self, AudienceEvent, FrameDisposition, LifecycleKind, ReplacementKind, ResolveKind, Session,
};
use agent_intercom_core::scope::{self, Scope};
use agent_intercom_core::{Error, ErrorCode};

/// The ABI version. See the stability policy at the top of this header.
pub const AIC_ABI_VERSION: u32 = 1;
/// Length of a hex SHA-256 digest, without the terminating NUL.
pub const AIC_HASH_HEX_LEN: usize = 64;
const _: () = assert!(AIC_HASH_HEX_LEN == canonical::HASH_HEX_LEN);

/// Details of a failed call: a stable code and a message. Release with aic_error_free().
pub struct aic_error {
    code: ErrorCode,
    message: CString,
}

/// Whether a parsed scope input is the unscoped group or a scope id.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum aic_scope_kind {
    /// Absent or empty: the unscoped group.
    Unscoped = 0,
    /// A valid scope id.
    Scoped = 1,
}

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

/// One lifecycle event of a replacement plan.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct aic_lifecycle_step {
    /// `left` or `joined`.
    pub kind: LifecycleKind,
    /// true when the event goes to the new scope's audience, false for the old scope's.
    pub in_new_scope: bool,
}

/// The ordered events of a session-id replacement.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct aic_replacement_plan {
    /// Cross-scope or same-scope.
    pub kind: ReplacementKind,
    /// The events, to be emitted in this order.
    pub steps: [aic_lifecycle_step; 2],
}

fn fail(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::new(code, message)
}

/// Runs `body`, catching panics and reporting failures through `err`.
fn guard(err: *mut *mut aic_error, body: impl FnOnce() -> Result<(), Error>) -> ErrorCode {
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
                unsafe { *err = Box::into_raw(Box::new(aic_error { code, message })) };
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
fn check_pair<T>(ptr: *const T, len: usize, what: &str) -> Result<bool, Error> {
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
unsafe fn c_slice<'a, T>(ptr: *const T, len: usize, what: &str) -> Result<&'a [T], Error> {
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
unsafe fn c_slice_out<'a, T>(
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
unsafe fn text<'a>(ptr: *const c_char, len: usize, what: &str) -> Result<&'a str, Error> {
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
unsafe fn scope_arg<'a>(ptr: *const c_char, len: usize, what: &str) -> Result<Scope<'a>, Error> {
    // SAFETY: forwarded contract.
    let value = unsafe { text(ptr, len, what)? };
    scope::parse_scope(Some(value), what)
}

fn out<'a, T>(ptr: *mut T, what: &str) -> Result<&'a mut T, Error> {
    // SAFETY: non-NULL out-pointers are valid for writes by contract.
    unsafe { ptr.as_mut() }.ok_or_else(|| fail(ErrorCode::NullPointer, format!("{what} is NULL")))
}

/// Converts a candidate array into sessions.
unsafe fn sessions<'a>(
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
fn write_indices(
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

fn owned_string(
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

macro_rules! static_cstr {
    ($value:expr) => {{
        static S: LazyLock<CString> = LazyLock::new(|| CString::new($value).expect("no NUL"));
        S.as_ptr()
    }};
}

/// The library version, e.g. "0.1.0". Static.
#[unsafe(no_mangle)]
pub extern "C" fn aic_version() -> *const c_char {
    static_cstr!(agent_intercom_core::VERSION)
}

/// The ABI version (AIC_ABI_VERSION of the library actually loaded).
#[unsafe(no_mangle)]
pub extern "C" fn aic_abi_version() -> u32 {
    AIC_ABI_VERSION
}

/// The stable name of a status ("OK", "INVALID_SCOPE", ...), or "UNKNOWN". Static.
#[unsafe(no_mangle)]
pub extern "C" fn aic_status_name(status: u32) -> *const c_char {
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

/// The status of an error; AIC_STATUS_NULL_POINTER for NULL.
///
/// # Safety
/// `err` must be NULL or an error returned by this library and not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_error_code(err: *const aic_error) -> ErrorCode {
    // SAFETY: by contract.
    unsafe { err.as_ref() }.map_or(ErrorCode::NullPointer, |e| e.code)
}

/// The message of an error, valid until aic_error_free(err); "" for NULL. Messages never
/// contain a rejected scope id.
///
/// # Safety
/// `err` must be NULL or an error returned by this library and not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_error_message(err: *const aic_error) -> *const c_char {
    // SAFETY: by contract.
    match unsafe { err.as_ref() } {
        Some(e) => e.message.as_ptr(),
        None => static_cstr!(""),
    }
}

/// Releases an error. NULL is a no-op.
///
/// # Safety
/// `err` must be NULL or an error returned by this library, freed at most once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_error_free(err: *mut aic_error) {
    if !err.is_null() {
        // SAFETY: created by Box::into_raw in guard().
        drop(unsafe { Box::from_raw(err) });
    }
}

/// Releases a string returned by this library. NULL is a no-op.
///
/// # Safety
/// `s` must be NULL or a `char *` returned by this library, freed at most once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: created by CString::into_raw in owned_string().
        drop(unsafe { CString::from_raw(s) });
    }
}

/// "pi-intercom". Static.
#[unsafe(no_mangle)]
pub extern "C" fn aic_protocol_name() -> *const c_char {
    static_cstr!(protocol::PROTOCOL_NAME)
}

/// 4.
#[unsafe(no_mangle)]
pub extern "C" fn aic_protocol_version() -> u32 {
    protocol::PROTOCOL_VERSION
}

/// "AGENT_INTERCOM_SCOPE_ID". Static.
#[unsafe(no_mangle)]
pub extern "C" fn aic_scope_env() -> *const c_char {
    static_cstr!(protocol::SCOPE_ENV)
}

/// "^[A-Za-z0-9_-]{16,128}$". Static.
#[unsafe(no_mangle)]
pub extern "C" fn aic_scope_id_pattern_source() -> *const c_char {
    static_cstr!(protocol::SCOPE_ID_PATTERN_SOURCE)
}

/// The acceptance-vector schema version (2).
#[unsafe(no_mangle)]
pub extern "C" fn aic_vector_schema_version() -> u32 {
    protocol::VECTOR_SCHEMA_VERSION
}

/// The semantics hash of the embedded protocol-v4 corpus, computed from its vectors (64
/// lowercase hex characters). Static.
#[unsafe(no_mangle)]
pub extern "C" fn aic_protocol_v4_semantics_hash() -> *const c_char {
    static_cstr!(corpus::semantics_hash())
}

/// The embedded corpus document (vectors/protocol-v4.json) as UTF-8 JSON. Static. Its length
/// in bytes is written to `out_len` when that is non-NULL.
///
/// # Safety
/// `out_len` must be NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_protocol_v4_corpus_json(out_len: *mut usize) -> *const c_char {
    if !out_len.is_null() {
        // SAFETY: by contract.
        unsafe { *out_len = corpus::CORPUS_JSON.len() };
    }
    static_cstr!(corpus::CORPUS_JSON)
}

/// Parses a scope input. NULL/empty is unscoped; anything else must match
/// ^[A-Za-z0-9_-]{16,128}$ byte for byte (AIC_STATUS_INVALID_SCOPE otherwise).
///
/// # Safety
/// `value` must be NULL or readable for `len` bytes; `out_kind` valid for writes; `err` NULL or
/// valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_scope_parse(
    value: *const c_char,
    len: usize,
    out_kind: *mut aic_scope_kind,
    err: *mut *mut aic_error,
) -> ErrorCode {
    guard(err, || {
        // SAFETY: forwarded contract.
        let parsed = unsafe { scope_arg(value, len, "scopeId")? };
        *out(out_kind, "out_kind")? = if parsed.is_some() {
            aic_scope_kind::Scoped
        } else {
            aic_scope_kind::Unscoped
        };
        Ok(())
    })
}

/// Strict scope equality after parsing both inputs: unscoped equals only unscoped.
///
/// # Safety
/// Inputs follow the (pointer, length) contract; `out_same` valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_same_scope(
    left: *const c_char,
    left_len: usize,
    right: *const c_char,
    right_len: usize,
    out_same: *mut bool,
    err: *mut *mut aic_error,
) -> ErrorCode {
    guard(err, || {
        // SAFETY: forwarded contract.
        let (a, b) = unsafe {
            (
                scope_arg(left, left_len, "left")?,
                scope_arg(right, right_len, "right")?,
            )
        };
        *out(out_same, "out_same")? = scope::same_scope(a, b);
        Ok(())
    })
}

/// Resolves a `send.to` selector (global exact id, then exact case-sensitive name in the actor's
/// scope, then unique id prefix in the actor's scope). Writes the kind, the number of matching
/// candidates to `out_count`, and up to `capacity` of their indices (ascending) to `out_indices`
/// (which may be NULL only when `capacity` is 0; a capacity of more than PTRDIFF_MAX bytes is
/// refused like an input length). AMBIGUOUS_TARGET and SESSION_NOT_FOUND are
/// outcomes, not failures: the status is AIC_STATUS_OK.
///
/// # Safety
/// `candidates` readable for `count` elements (or NULL with 0); text inputs follow the
/// (pointer, length) contract; `out_indices` writable for `capacity` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_resolve_target(
    candidates: *const aic_candidate,
    count: usize,
    actor_scope: *const c_char,
    actor_scope_len: usize,
    selector: *const c_char,
    selector_len: usize,
    out_kind: *mut ResolveKind,
    out_indices: *mut usize,
    capacity: usize,
    out_count: *mut usize,
    err: *mut *mut aic_error,
) -> ErrorCode {
    guard(err, || {
        // SAFETY: forwarded contract.
        let (list, actor_scope, selector) = unsafe {
            (
                sessions(candidates, count)?,
                scope_arg(actor_scope, actor_scope_len, "actorScope")?,
                text(selector, selector_len, "selector")?,
            )
        };
        let kind = out(out_kind, "out_kind")?;
        let resolution = routing::resolve_target(actor_scope, selector, &list);
        write_indices(&resolution.matches, out_indices, capacity, out_count)?;
        *kind = resolution.kind;
        Ok(())
    })
}

/// Like aic_resolve_target, with the candidates given as a JSON array of
/// `{"id": string, "name"?: string|null, "scope"?: string|null}`. Writes an owned JSON object
/// `{"kind": "...", "targetIds": [...]}` to `out_json` (release with aic_string_free) and its
/// length to `out_len` when non-NULL.
///
/// # Safety
/// Text inputs follow the (pointer, length) contract; `out_json` valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_resolve_target_json(
    candidates_json: *const c_char,
    candidates_json_len: usize,
    actor_scope: *const c_char,
    actor_scope_len: usize,
    selector: *const c_char,
    selector_len: usize,
    out_json: *mut *mut c_char,
    out_len: *mut usize,
    err: *mut *mut aic_error,
) -> ErrorCode {
    guard(err, || {
        // SAFETY: forwarded contract.
        let (doc_text, actor_scope, selector) = unsafe {
            (
                text(candidates_json, candidates_json_len, "candidates")?,
                scope_arg(actor_scope, actor_scope_len, "actorScope")?,
                text(selector, selector_len, "selector")?,
            )
        };
        let doc = canonical::parse(doc_text)?;
        let list =
            corpus::to_sessions(&corpus::parse_candidates(&doc, "candidates")?, "candidates")?;
        let resolution = routing::resolve_target(actor_scope, selector, &list);
        let ids = resolution
            .matches
            .iter()
            .map(|&i| canonical::Value::String(list[i].id.into()))
            .collect();
        let answer = canonical::Value::Object(vec![
            (
                "kind".into(),
                canonical::Value::String(resolution.kind.as_str().into()),
            ),
            ("targetIds".into(), canonical::Value::Array(ids)),
        ]);
        owned_string(canonical::canonical_json(&answer)?, out_json, out_len)
    })
}

/// The sessions a `list` from `actor_id` in `actor_scope` returns (itself plus its scope), as
/// candidate indices; see aic_resolve_target for the output convention.
///
/// # Safety
/// As aic_resolve_target.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_list_visible(
    candidates: *const aic_candidate,
    count: usize,
    actor_id: *const c_char,
    actor_id_len: usize,
    actor_scope: *const c_char,
    actor_scope_len: usize,
    out_indices: *mut usize,
    capacity: usize,
    out_count: *mut usize,
    err: *mut *mut aic_error,
) -> ErrorCode {
    guard(err, || {
        // SAFETY: forwarded contract.
        let (list, actor_id, actor_scope) = unsafe {
            (
                sessions(candidates, count)?,
                text(actor_id, actor_id_len, "actorId")?,
                scope_arg(actor_scope, actor_scope_len, "actorScope")?,
            )
        };
        write_indices(
            &routing::list_visible(actor_id, actor_scope, &list),
            out_indices,
            capacity,
            out_count,
        )
    })
}

/// Who hears `event` (an aic_audience_event value) about the subject: every session in the
/// subject's scope except the subject. AIC_STATUS_INVALID_ARGUMENT for an unknown event.
///
/// # Safety
/// As aic_resolve_target.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_audience(
    event: u32,
    candidates: *const aic_candidate,
    count: usize,
    subject_id: *const c_char,
    subject_id_len: usize,
    subject_scope: *const c_char,
    subject_scope_len: usize,
    out_indices: *mut usize,
    capacity: usize,
    out_count: *mut usize,
    err: *mut *mut aic_error,
) -> ErrorCode {
    guard(err, || {
        let event = [
            AudienceEvent::SessionJoined,
            AudienceEvent::SessionLeft,
            AudienceEvent::PresenceUpdate,
        ]
        .into_iter()
        .find(|e| *e as u32 == event)
        .ok_or_else(|| {
            fail(
                ErrorCode::InvalidArgument,
                format!("event {event} is not an aic_audience_event"),
            )
        })?;
        // SAFETY: forwarded contract.
        let (list, subject_id, subject_scope) = unsafe {
            (
                sessions(candidates, count)?,
                text(subject_id, subject_id_len, "subjectId")?,
                scope_arg(subject_scope, subject_scope_len, "subjectScope")?,
            )
        };
        write_indices(
            &routing::audience(event, subject_id, subject_scope, &list),
            out_indices,
            capacity,
            out_count,
        )
    })
}

/// Plans the replacement of a session id bound in `old_scope` by a binding in `new_scope`:
/// `left` to the old scope's audience strictly before `joined` to the new scope's.
///
/// # Safety
/// Text inputs follow the (pointer, length) contract; `out_plan` valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_plan_replacement(
    old_scope: *const c_char,
    old_scope_len: usize,
    new_scope: *const c_char,
    new_scope_len: usize,
    out_plan: *mut aic_replacement_plan,
    err: *mut *mut aic_error,
) -> ErrorCode {
    guard(err, || {
        // SAFETY: forwarded contract.
        let (old, new) = unsafe {
            (
                scope_arg(old_scope, old_scope_len, "oldScope")?,
                scope_arg(new_scope, new_scope_len, "newScope")?,
            )
        };
        let plan = routing::plan_replacement("", old, new);
        let step = |i: usize| aic_lifecycle_step {
            kind: plan.events[i].kind,
            in_new_scope: plan.events[i].kind == LifecycleKind::Joined,
        };
        *out(out_plan, "out_plan")? = aic_replacement_plan {
            kind: plan.kind,
            steps: [step(0), step(1)],
        };
        Ok(())
    })
}

/// Accept or discard a frame that arrived on a connection with binding generation
/// `connection_generation`, given the session's current generation (`has_current` false when
/// the session is no longer bound).
#[unsafe(no_mangle)]
pub extern "C" fn aic_frame_disposition_of(
    connection_generation: u64,
    current_generation: u64,
    has_current: bool,
) -> FrameDisposition {
    routing::frame_disposition(
        connection_generation,
        has_current.then_some(current_generation),
    )
}

/// Canonical JSON of a JSON document. Writes an owned NUL-terminated string to `out_json`
/// (release with aic_string_free) and its length to `out_len` when non-NULL.
///
/// # Safety
/// `json` follows the (pointer, length) contract; `out_json` valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_canonical_json(
    json: *const c_char,
    json_len: usize,
    out_json: *mut *mut c_char,
    out_len: *mut usize,
    err: *mut *mut aic_error,
) -> ErrorCode {
    guard(err, || {
        // SAFETY: forwarded contract.
        let input = unsafe { text(json, json_len, "json")? };
        owned_string(canonical::canonical_json_of_text(input)?, out_json, out_len)
    })
}

/// canonicalHash(domain, document): lowercase hex SHA-256 of the canonical frame, written with a
/// terminating NUL to `out_hex`, which must hold AIC_HASH_HEX_LEN + 1 bytes.
///
/// # Safety
/// Text inputs follow the (pointer, length) contract; `out_hex` writable for 65 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_canonical_hash(
    domain: *const c_char,
    domain_len: usize,
    json: *const c_char,
    json_len: usize,
    out_hex: *mut c_char,
    err: *mut *mut aic_error,
) -> ErrorCode {
    guard(err, || {
        // SAFETY: forwarded contract.
        let (domain, input) = unsafe {
            (
                text(domain, domain_len, "domain")?,
                text(json, json_len, "json")?,
            )
        };
        let hex = canonical::canonical_hash_of_text(domain, input)?;
        let dest = out(out_hex, "out_hex")?;
        // SAFETY: the caller promises AIC_HASH_HEX_LEN + 1 writable bytes.
        unsafe {
            ptr::copy_nonoverlapping(hex.as_ptr().cast::<c_char>(), dest, AIC_HASH_HEX_LEN);
            *(dest as *mut c_char).add(AIC_HASH_HEX_LEN) = 0;
        }
        Ok(())
    })
}

/// A broker running inside this process (on its own thread). Create with aic_broker_start,
/// release with aic_broker_free (which stops it first if it still runs).
pub struct aic_broker {
    handle: Option<agent_intercom_broker::BrokerHandle>,
    socket_path: CString,
}

/// Starts the broker of an agent directory in this process. `agent_dir` NULL/empty means
/// `$PI_CODING_AGENT_DIR` or `~/.pi/agent`. `settings` holds `key=value` lines (newline
/// separated; e.g. "idle_exit_ms=0\nmax_sessions=1000"), NULL/empty for the defaults.
/// Fails with AIC_STATUS_BROKER_ALREADY_RUNNING when a live process owns the directory,
/// AIC_STATUS_BROKER_STORE, AIC_STATUS_BROKER_IO, or AIC_STATUS_INVALID_ARGUMENT for a bad
/// setting. On success `*out_broker` owns the broker.
///
/// # Safety
/// Text inputs follow the (pointer, length) contract; `out_broker` valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_broker_start(
    agent_dir: *const c_char,
    agent_dir_len: usize,
    settings: *const c_char,
    settings_len: usize,
    out_broker: *mut *mut aic_broker,
    err: *mut *mut aic_error,
) -> ErrorCode {
    guard(err, || {
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
        let socket_path = CString::new(config.socket_path.display().to_string()).map_err(|_| {
            fail(
                ErrorCode::InvalidArgument,
                "the socket path holds a NUL byte",
            )
        })?;
        let handle = agent_intercom_broker::embed::start(config)?;
        *slot = Box::into_raw(Box::new(aic_broker {
            handle: Some(handle),
            socket_path,
        }));
        Ok(())
    })
}

/// The broker's socket path, valid until aic_broker_free; "" for NULL.
///
/// # Safety
/// `broker` must be NULL or a live broker from aic_broker_start.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_broker_socket_path(broker: *const aic_broker) -> *const c_char {
    // SAFETY: by contract.
    match unsafe { broker.as_ref() } {
        Some(b) => b.socket_path.as_ptr(),
        None => static_cstr!(""),
    }
}

/// True while the broker runs (false after aic_broker_stop or an idle exit, and for NULL).
///
/// # Safety
/// `broker` must be NULL or a live broker from aic_broker_start.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_broker_running(broker: *const aic_broker) -> bool {
    // SAFETY: by contract.
    unsafe { broker.as_ref() }.is_some_and(|b| b.handle.as_ref().is_some_and(|h| !h.is_finished()))
}

/// Stops the broker and waits until it removed its files. Stopping twice is harmless.
///
/// # Safety
/// `broker` must be a live broker from aic_broker_start (not freed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_broker_stop(
    broker: *mut aic_broker,
    err: *mut *mut aic_error,
) -> ErrorCode {
    guard(err, || {
        // SAFETY: by contract.
        let b = unsafe { broker.as_mut() }
            .ok_or_else(|| fail(ErrorCode::NullPointer, "broker is NULL"))?;
        if let Some(handle) = b.handle.take() {
            handle.close();
        }
        Ok(())
    })
}

/// Stops the broker if it runs, and releases it. NULL is a no-op.
///
/// # Safety
/// `broker` must be NULL or a broker from aic_broker_start, freed at most once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_broker_free(broker: *mut aic_broker) {
    if !broker.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: created by Box::into_raw in aic_broker_start.
            drop(unsafe { Box::from_raw(broker) });
        }));
    }
}

/// A scratchpad store (one SQLite database, shared safely with other processes). Open with
/// aic_pad_open, use with aic_pad_request (from any thread; calls on one handle are serialised),
/// release with aic_pad_close.
pub struct aic_pad {
    store: std::sync::Mutex<agent_intercom_scratchpad::Store>,
}

/// Opens (creating if needed) the scratchpad store at `path`. `options_json` is NULL/empty for the
/// defaults, or a JSON object with any of per_project_cap, per_recipient_cap, max_content_bytes,
/// allow_full_export. Fails with AIC_STATUS_STORE_NEWER_SCHEMA, AIC_STATUS_STORE_CORRUPT
/// (the file is left untouched), AIC_STATUS_STORE_IO, or AIC_STATUS_INVALID_ARGUMENT /
/// AIC_STATUS_INVALID_JSON for bad options. On success `*out_pad` owns the store.
///
/// # Safety
/// Text inputs follow the (pointer, length) contract; `out_pad` valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_pad_open(
    path: *const c_char,
    path_len: usize,
    options_json: *const c_char,
    options_len: usize,
    out_pad: *mut *mut aic_pad,
    err: *mut *mut aic_error,
) -> ErrorCode {
    guard(err, || {
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
    })
}

/// One scratchpad operation: `op` is one of register, post, unread, list, task.create, task.get,
/// task.transition, task.history, task.artifact, task.artifacts, rate.take, cost.record,
/// cost.list, export, events, or a rule check (check.visible, check.ttl, check.transition,
/// check.addressing, check.redact, check.rate) which needs no store (`pad` may then be NULL).
/// `args_json` is a JSON object (NULL/empty for none); see docs/scratchpad.md. On success the
/// result is written as JSON to `*out_json` (release with aic_string_free). Refusals carry stable
/// codes: AIC_STATUS_INVALID_TTL, AIC_STATUS_PRIVATE_WITHOUT_RECIPIENT,
/// AIC_STATUS_CONTENT_TOO_LARGE, AIC_STATUS_INVALID_TRANSITION, AIC_STATUS_NOT_FOUND,
/// AIC_STATUS_FORBIDDEN, AIC_STATUS_INVALID_ARGUMENT, AIC_STATUS_STORE_IO ...; a refused
/// operation changes nothing. rate.take reads unnamed limits from LEAN_CTX_RATE_LIMIT_*_PER_MIN
/// (or LCTX_...).
///
/// # Safety
/// `pad` must be NULL or a live store from aic_pad_open; text inputs follow the (pointer,
/// length) contract; `out_json` and `out_len` valid for writes (`out_len` may be NULL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_pad_request(
    pad: *const aic_pad,
    op: *const c_char,
    op_len: usize,
    args_json: *const c_char,
    args_len: usize,
    out_json: *mut *mut c_char,
    out_len: *mut usize,
    err: *mut *mut aic_error,
) -> ErrorCode {
    guard(err, || {
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
            &|k| std::env::var(k).ok(),
            || fail(ErrorCode::NullPointer, "pad is NULL"),
        )?;
        owned_string(result.to_string(), out_json, out_len)
    })
}

/// Closes the store. NULL is a no-op.
///
/// # Safety
/// `pad` must be NULL or a store from aic_pad_open, closed at most once, with no call on it in
/// flight.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aic_pad_close(pad: *mut aic_pad) {
    if !pad.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: created by Box::into_raw in aic_pad_open.
            drop(unsafe { Box::from_raw(pad) });
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn guard_turns_panics_into_internal() {
        let mut err: *mut aic_error = ptr::null_mut();
        let status = guard(&mut err, || panic!("boom"));
        assert_eq!(status, ErrorCode::Internal);
        unsafe {
            assert_eq!(aic_error_code(err), ErrorCode::Internal);
            assert!(
                CStr::from_ptr(aic_error_message(err))
                    .to_str()
                    .unwrap()
                    .contains("panic")
            );
            aic_error_free(err);
        }
    }

    fn refused(result: Result<impl std::fmt::Debug, Error>, code: ErrorCode, what: &str) {
        let e = result.unwrap_err();
        assert_eq!(e.code(), code, "{e:?}");
        assert!(e.message().starts_with(&format!("{what} ")), "{e:?}");
    }

    #[test]
    fn check_pair_refuses_sizes_past_isize_max_whatever_the_pointer() {
        let byte = [b'x'];
        for len in [usize::MAX, isize::MAX as usize + 1] {
            for p in [byte.as_ptr(), ptr::null()] {
                refused(
                    check_pair(p, len, "json"),
                    ErrorCode::InvalidArgument,
                    "json",
                );
            }
        }
        // The largest possible size passes the size check: the rest is the caller's promise.
        assert_eq!(
            check_pair(byte.as_ptr(), isize::MAX as usize, "json"),
            Ok(true)
        );

        // Arrays: count * element size.
        let words = [0usize; 2];
        let limit = isize::MAX as usize / size_of::<usize>();
        assert_eq!(check_pair(words.as_ptr(), limit, "out_indices"), Ok(true));
        for len in [limit + 1, isize::MAX as usize + 1, usize::MAX] {
            let e = check_pair(words.as_ptr(), len, "out_indices").unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
            let unit = format!(
                "elements of {} bytes, more than PTRDIFF_MAX",
                size_of::<usize>()
            );
            assert!(e.message().contains(&unit), "{e:?}");
        }
        let limit = isize::MAX as usize / size_of::<aic_candidate>();
        assert_eq!(
            check_pair(ptr::null::<aic_candidate>(), limit + 1, "candidates")
                .unwrap_err()
                .code(),
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn check_pair_null_and_alignment() {
        assert_eq!(check_pair(ptr::null::<u8>(), 0, "json"), Ok(false));
        refused(
            check_pair(ptr::null::<u8>(), 1, "json"),
            ErrorCode::NullPointer,
            "json",
        );
        let words = [0usize; 2];
        let odd = words.as_ptr().cast::<u8>().wrapping_add(1).cast::<usize>();
        refused(
            check_pair(odd, 1, "out_indices"),
            ErrorCode::InvalidArgument,
            "out_indices",
        );
    }

    #[test]
    fn slices_are_refused_before_they_are_formed() {
        // With debug assertions, forming any of these slices would abort the test process.
        let byte = [b'x'];
        unsafe {
            refused(
                text(byte.as_ptr().cast(), usize::MAX, "selector"),
                ErrorCode::InvalidArgument,
                "selector",
            );
            refused(
                sessions(ptr::null(), usize::MAX),
                ErrorCode::InvalidArgument,
                "candidates",
            );
            let one = [aic_candidate {
                id: byte.as_ptr().cast(),
                id_len: 1,
                name: ptr::null(),
                name_len: usize::MAX,
                scope: ptr::null(),
                scope_len: 0,
            }];
            refused(
                sessions(one.as_ptr(), 1),
                ErrorCode::InvalidArgument,
                "candidates[0].name",
            );
            let mut kind = aic_scope_kind::Scoped;
            let mut err = ptr::null_mut();
            let status = aic_scope_parse(byte.as_ptr().cast(), usize::MAX, &mut kind, &mut err);
            assert_eq!(status, ErrorCode::InvalidArgument);
            assert_eq!(aic_error_code(err), ErrorCode::InvalidArgument);
            aic_error_free(err);
        }
    }

    #[test]
    fn write_indices_checks_the_buffer_before_writing() {
        let mut buf = [7usize; 2];
        let mut count = 99;
        refused(
            write_indices(&[1], buf.as_mut_ptr(), usize::MAX, &mut count),
            ErrorCode::InvalidArgument,
            "out_indices",
        );
        // NULL with a capacity is refused even with nothing to write.
        refused(
            write_indices(&[], ptr::null_mut(), 1, &mut count),
            ErrorCode::NullPointer,
            "out_indices",
        );
        assert_eq!((buf, count), ([7, 7], 99));
        assert_eq!(
            write_indices(&[4, 5, 6], buf.as_mut_ptr(), 2, &mut count),
            Ok(())
        );
        assert_eq!((buf, count), ([4, 5], 3));
        assert_eq!(write_indices(&[4], ptr::null_mut(), 0, &mut count), Ok(()));
        assert_eq!(count, 1);
    }

    #[test]
    fn status_names() {
        let name = |s: u32| {
            unsafe { CStr::from_ptr(aic_status_name(s)) }
                .to_str()
                .unwrap()
        };
        assert_eq!(name(0), "OK");
        assert_eq!(name(ErrorCode::InvalidScope as u32), "INVALID_SCOPE");
        assert_eq!(name(9999), "UNKNOWN");
    }
}
