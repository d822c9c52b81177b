//! Unit tests of the argument helpers and the boundary.

use std::ffi::CStr;
use std::ptr;

use agent_intercom_core::{Error, ErrorCode};

use crate::args::*;
use crate::contract::*;
use crate::status::*;

#[test]
fn guard_turns_panics_into_internal() {
    let mut err: *mut aic_error = ptr::null_mut();
    let status = guard(&mut err, || panic!("boom"));
    assert_eq!(status, ErrorCode::Internal);
    // SAFETY: guard set `err` to an error of this library, freed once below.
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
    // SAFETY: every pointer is valid for what is read, except the lengths under test, which the
    // helpers must refuse before reading.
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
        // SAFETY: aic_status_name returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(aic_status_name(s)) }
            .to_str()
            .unwrap()
    };
    assert_eq!(name(0), "OK");
    assert_eq!(name(ErrorCode::InvalidScope as u32), "INVALID_SCOPE");
    assert_eq!(name(9999), "UNKNOWN");
}

#[test]
fn every_export_is_written_with_ffi_fn() {
    // The one place that adds `extern "C"` is the macro: an export written by hand could forget
    // the panic guard or the `err` convention.
    for (file, text) in [
        ("lib.rs", include_str!("lib.rs")),
        ("args.rs", include_str!("args.rs")),
        ("status.rs", include_str!("status.rs")),
        ("contract.rs", include_str!("contract.rs")),
        ("broker.rs", include_str!("broker.rs")),
        ("pad.rs", include_str!("pad.rs")),
    ] {
        let needle = ["extern", " \"C\""].concat();
        assert!(
            !text.contains(&needle),
            "{file} defines an export without ffi_fn!"
        );
        let mangle = ["no_", "mangle"].concat();
        assert!(
            !text.contains(&mangle),
            "{file} exports a symbol without ffi_fn!"
        );
    }
    assert!(include_str!("macros.rs").contains("ffi_fn"));
}
