//! The crossing of the TypeScript contract's functions (`lib/contract.js`): an operation by its
//! index in [`contract_operations`], the arguments in the core's snapshot form
//! (`agent_intercom_core::contract::value`), and the parsed form of the deep-frozen values among
//! them that were seen before ([`contract_keep`]): a frozen value cannot change, so it is parsed
//! once and then moved into each call's argument tree and back out, never copied or parsed
//! again. Every rule is the core's (`agent_intercom_core::registry`).
//!
//! Why text and not a walk of the JavaScript values from here: napi can neither tell a proxy
//! from an object nor read a property descriptor without running the caller's code (a getter, a
//! proxy trap), which the contract forbids, so the descriptors are read in JavaScript anyway;
//! and reading a value through napi costs about 0.1 µs a string (measured: an array of 30
//! strings takes 2.7 µs to cross as values), several times what writing and parsing its text
//! costs. What the text form cost besides was the parser's allocation (the addon's allocator is
//! mimalloc), the operation's name (an index now), for frozen values the parse itself, and
//! V8's flattening of a text built with `+=` (the text is now UTF-8 written into a
//! `Uint8Array`, read here in place).

use std::cell::RefCell;
use std::sync::LazyLock;

use agent_intercom_core::contract::{Js, JsStr, Out};
use agent_intercom_core::{Error, ErrorCode, registry};
use napi::JsValue;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::{Result, js_error};

/// Every operation's name, sorted: `contract_operations` in this order, so an operation crosses
/// as its index.
static OPERATIONS: LazyLock<Vec<&'static str>> = LazyLock::new(registry::operations);

/// The name of every contract operation, sorted (the index of each is what
/// [`contract_call`] takes).
#[napi]
pub fn contract_operations() -> Vec<String> {
    OPERATIONS.iter().map(|s| s.to_string()).collect()
}

/// The parsed form of a deep-frozen value, kept by `lib/contract.js` beside the object. A call
/// that passes it moves it into its argument tree and back out when the operation returns
/// (`None` meanwhile), so nothing of it is copied.
pub struct Kept(RefCell<Option<Js>>);

fn parse(text: &str) -> Result<Js> {
    Js::parse_snapshot(text).map_err(|e| syntax(&e))
}

fn syntax(e: &agent_intercom_core::contract::value::SyntaxError) -> napi::Error<crate::CodeStatus> {
    js_error(Error::new(
        ErrorCode::InvalidJson,
        format!("contract arguments: {e}"),
    ))
}

/// Parses one value written in the snapshot form (its UTF-8 in a `Uint8Array`), to be passed
/// again in `kept`.
#[napi]
pub fn contract_keep(value: Unknown<'_>) -> Result<External<Kept>> {
    with_text(value, None, |text| {
        Ok(External::new(Kept(RefCell::new(Some(parse(text)?)))))
    })
}

/// Runs operation `op` (an index into [`contract_operations`]) over `args`, the snapshot of the
/// argument list (its UTF-8 in the first `len` bytes of a `Uint8Array`, read in place), in
/// which each `r` stands for the next value of `kept` (an array of
/// [`contract_keep`] answers). Answers as `registry::call_snapshot` does, `u`, `i<index>`,
/// `j<json>` or `e<failure json>`, or `s<text>` for a string.
#[napi]
pub fn contract_call(
    op: u32,
    args: Unknown<'_>,
    len: Option<u32>,
    kept: Option<Array<'_>>,
) -> Result<Answer> {
    let name = OPERATIONS.get(op as usize).ok_or_else(|| {
        js_error(Error::new(
            ErrorCode::InvalidArgument,
            format!("unknown contract operation #{op}"),
        ))
    })?;
    let mut handles: Vec<&Kept> = Vec::new();
    if let Some(kept) = &kept {
        for i in 0..kept.len() {
            let handle: &External<Kept> =
                kept.get(i).map_err(crate::napi_failure)?.ok_or_else(|| {
                    js_error(Error::new(ErrorCode::InvalidArgument, "kept has a hole"))
                })?;
            handles.push(handle);
        }
    }
    let mut next = handles.iter().map(|h| h.0.borrow_mut().take());
    let mut give = || next.next().flatten();
    // A kept value taken before a parse error is lost with the partial tree: lib/contract.js
    // then forgets every kept value and writes the arguments out in full.
    let (mut value, slots) = with_text(args, len, |text| {
        Js::parse_snapshot_kept(text, &mut give).map_err(|e| syntax(&e))
    })?;
    let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(name, &value)));
    let answer = answer.map(|r| r.map(Answer));
    // Every kept value goes back where it came from, whatever the operation did.
    for (slot, handle) in slots.iter().zip(&handles) {
        *handle.0.borrow_mut() = value.take_at(slot);
    }
    answer.unwrap_or_else(|_| {
        Err(js_error(Error::new(
            ErrorCode::Internal,
            format!("contract operation {name} panicked"),
        )))
    })
}

fn run(name: &str, value: &Js) -> Result<String> {
    let Js::Array(array) = value else {
        return Err(js_error(Error::new(
            ErrorCode::InvalidArgument,
            "the arguments must be a JSON array",
        )));
    };
    let mut list = Vec::with_capacity(array.items.len());
    for item in &array.items {
        list.push(item.as_ref().ok_or_else(|| {
            js_error(Error::new(
                ErrorCode::InvalidArgument,
                "the argument list has a hole",
            ))
        })?);
    }
    Ok(match registry::call(name, &list).map_err(js_error)? {
        Ok(Out::Undefined) => "u".to_string(),
        Ok(Out::Input(index)) => format!("i{index}"),
        // A string answer (a canonical text, a hash) crosses as itself, not as JSON to parse.
        Ok(Out::Json(json)) if json.starts_with('"') => match Js::parse_json(&json) {
            Ok(Js::Str(JsStr { text, lone: None })) => {
                let mut out = String::with_capacity(text.len() + 1);
                out.push('s');
                out.push_str(&text);
                out
            }
            _ => format!("j{json}"),
        },
        Ok(Out::Json(json)) => {
            let mut out = String::with_capacity(json.len() + 1);
            out.push('j');
            out.push_str(&json);
            out
        }
        Err(failure) => format!("e{}", failure.to_json()),
    })
}

/// An answer's text as a JavaScript string, made without V8's UTF-8 decoder: mostly ASCII, which
/// crosses as Latin-1 (a copy); text within Latin-1 (`é`, `ü`: the worker-store vectors' names)
/// is narrowed to it here, and anything wider crosses as UTF-16. Measured: decoding UTF-8 was a
/// seventh of a call answering a 2.5 KB record.
pub struct Answer(String);

impl TypeName for Answer {
    fn type_name() -> &'static str {
        "string"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ToNapiValue for Answer {
    unsafe fn to_napi_value(
        env: napi::sys::napi_env,
        answer: Answer,
    ) -> napi::Result<napi::sys::napi_value> {
        let text = answer.0;
        let mut out = std::ptr::null_mut();
        // ASCII is Latin-1 as it is; text within Latin-1 is narrowed to it.
        let narrow = if text.is_ascii() {
            Some(std::borrow::Cow::Borrowed(text.as_bytes()))
        } else {
            latin1(&text).map(std::borrow::Cow::Owned)
        };
        let (status, how) = if let Some(bytes) = narrow {
            // SAFETY: the pointer and length are those of a live buffer of Latin-1 bytes.
            let status = unsafe {
                napi::sys::napi_create_string_latin1(
                    env,
                    bytes.as_ptr().cast(),
                    bytes.len() as isize,
                    &mut out,
                )
            };
            (status, "latin1")
        } else {
            let units: Vec<u16> = text.encode_utf16().collect();
            // SAFETY: the pointer and length (in code units) are those of a live buffer.
            let status = unsafe {
                napi::sys::napi_create_string_utf16(
                    env,
                    units.as_ptr(),
                    units.len() as isize,
                    &mut out,
                )
            };
            (status, "utf16")
        };
        if status == napi::sys::Status::napi_ok {
            Ok(out)
        } else {
            Err(napi::Error::from_reason(format!(
                "napi_create_string_{how} failed ({status})"
            )))
        }
    }
}

/// `text` as Latin-1 bytes, when every character is below U+0100 (two UTF-8 bytes led by 0xC2
/// or 0xC3); ASCII runs are copied whole.
fn latin1(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    // A byte above 0xC3 can only lead a character past U+00FF (continuation bytes are below
    // 0xC0): known before anything is copied.
    if bytes.iter().any(|&b| b > 0xC3) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let run = bytes[at..]
            .iter()
            .position(|b| !b.is_ascii())
            .unwrap_or(bytes.len() - at);
        out.extend_from_slice(&bytes[at..at + run]);
        at += run;
        if at == bytes.len() {
            break;
        }
        // A lead byte in a valid str: 0xC2/0xC3 start U+0080..U+00FF, whose one continuation
        // byte carries the low six bits.
        match bytes[at] {
            lead @ (0xC2 | 0xC3) => out.push(((lead & 0x03) << 6) | (bytes[at + 1] & 0x3F)),
            _ => return None,
        }
        at += 2;
    }
    Some(out)
}

/// Runs `f` on the text in the first `len` bytes (all of them without `len`) of `Uint8Array`
/// `value`, read where it is.
fn with_text<T>(
    value: Unknown<'_>,
    len: Option<u32>,
    f: impl FnOnce(&str) -> Result<T>,
) -> Result<T> {
    let bytes = bytes_of(&value, len)?;
    let text = std::str::from_utf8(bytes).map_err(|e| {
        js_error(Error::new(
            ErrorCode::InvalidJson,
            format!("contract arguments: {e}"),
        ))
    })?;
    f(text)
}

/// The first `len` bytes (all without `len`) of `Uint8Array` `value`, where they are.
///
/// The slice lives no longer than `value`, a value of the call: JavaScript runs nothing during
/// a contract call, so the array can be neither detached nor written meanwhile. An array over
/// a `SharedArrayBuffer` is refused: another thread could write it while it is read here.
fn bytes_of<'a>(value: &'a Unknown<'_>, len: Option<u32>) -> Result<&'a [u8]> {
    let (env, raw) = (value.value().env, value.raw());
    let not_bytes = || {
        js_error(Error::new(
            ErrorCode::InvalidArgument,
            "the arguments must be their snapshot's UTF-8 in a Uint8Array over an ArrayBuffer",
        ))
    };
    let mut is_typed = false;
    // SAFETY: `raw` is a live value of this call.
    check(unsafe { napi::sys::napi_is_typedarray(env, raw, &mut is_typed) })?;
    if !is_typed {
        return Err(not_bytes());
    }
    let mut kind = 0;
    let mut length = 0usize;
    let mut data = std::ptr::null_mut();
    let mut buffer = std::ptr::null_mut();
    // SAFETY: as above; napi writes the kind, the length in elements, the data pointer and
    // the buffer behind the view.
    check(unsafe {
        napi::sys::napi_get_typedarray_info(
            env,
            raw,
            &mut kind,
            &mut length,
            &mut data,
            &mut buffer,
            std::ptr::null_mut(),
        )
    })?;
    if kind != napi::sys::TypedarrayType::uint8_array {
        return Err(not_bytes());
    }
    let mut plain = false;
    // SAFETY: `buffer` is the live buffer napi just gave; a SharedArrayBuffer is not an
    // ArrayBuffer to napi_is_arraybuffer.
    check(unsafe { napi::sys::napi_is_arraybuffer(env, buffer, &mut plain) })?;
    if !plain {
        return Err(not_bytes());
    }
    let len = len.map_or(length, |n| n as usize);
    if len > length {
        return Err(js_error(Error::new(
            ErrorCode::InvalidArgument,
            format!("len {len} is past the array's {length} bytes"),
        )));
    }
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: napi gave the pointer to `length` bytes of a live array, and `len <= length`.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) })
}

fn check(status: napi::sys::napi_status) -> Result<()> {
    match status {
        napi::sys::Status::napi_ok => Ok(()),
        _ => Err(js_error(Error::new(
            ErrorCode::Internal,
            format!("reading the contract arguments failed (napi status {status})"),
        ))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn latin1_narrows_exactly_the_text_below_u0100() {
        let narrow = [
            "",
            "plain",
            "caf\u{e9}",
            "\u{80}\u{ff}\u{a0}x\u{c0}",
            "\u{ff}",
        ];
        for text in narrow {
            let expected: Vec<u8> = text.chars().map(|c| u32::from(c) as u8).collect();
            assert_eq!(super::latin1(text), Some(expected), "{text:?}");
        }
        for wide in ["\u{100}", "a\u{2028}b", "\u{1f600}", "\u{e9}\u{20ac}"] {
            assert_eq!(super::latin1(wide), None, "{wide:?}");
        }
    }
}
