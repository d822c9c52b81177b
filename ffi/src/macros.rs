//! `ffi_fn!`, the one way an export is written (hyper's `ffi_fn!`): it adds `#[no_mangle]` and
//! `extern "C"`, and for a fallible export the trailing `err` parameter and the [`guard`] that
//! catches panics and reports failures, so no export can forget either. Arguments are converted
//! by the helpers of `args.rs`, which check NULL, length and UTF-8 in one place.
//!
//! cbindgen does not expand macros on its own; `cargo xtask gen` expands this crate first (as
//! hyper's header script does) and generates the header from that.
//!
//! [`guard`]: crate::args::guard

/// Defines an export. The forms:
///
/// - `fn name(args) { body }`: fallible. The export also takes `err: *mut *mut aic_error` and
///   returns `aic_status`; `body` returns `Result<(), Error>` and runs inside `guard`.
/// - `fn name(args) -> T { body }` (or `unsafe fn` when it takes pointers): cannot fail
///   (constants, accessors of a handle). A panic, only possible through a bug in embedded data,
///   aborts the process as Rust's `extern "C"` does; it never unwinds into C.
/// - `release fn name(handle: *mut T) { body }`: a release function. NULL is a no-op and a panic
///   while dropping is swallowed (a release function cannot report one).
macro_rules! ffi_fn {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            $($arg: $ty,)*
            err: *mut *mut $crate::status::aic_error,
        ) -> agent_intercom_core::ErrorCode {
            $crate::args::guard(err, || $body)
        }
    };
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub extern "C" fn $name($($arg: $ty),*) -> $ret $body
    };
    (
        $(#[$doc:meta])*
        unsafe fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block
    ) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret $body
    };
    ($(#[$doc:meta])* release fn $name:ident($arg:ident: *mut $ty:ty) $body:block) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($arg: *mut $ty) {
            if !$arg.is_null() {
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| $body));
            }
        }
    };
}

/// A `*const c_char` to a static NUL-terminated copy of `$value`, made on first use.
macro_rules! static_cstr {
    ($value:expr) => {{
        static S: std::sync::LazyLock<std::ffi::CString> =
            std::sync::LazyLock::new(|| std::ffi::CString::new($value).expect("no NUL"));
        S.as_ptr()
    }};
}
