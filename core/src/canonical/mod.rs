//! Canonical JSON, the canonical frame and the domain-separated canonical hash.
//!
//! Canonical JSON is what JavaScript's `JSON.stringify` prints for a value whose object keys
//! were inserted in sorted order:
//!
//! * object keys sorted by UTF-16 code units, recursively; arrays keep their order;
//! * **integer-like keys**: JavaScript always enumerates array-index keys (`"0"`, `"10"`, ...:
//!   the canonical decimal form of an integer in `0..=4294967294`) first, in numeric order,
//!   whatever the insertion order. We match JavaScript exactly, so `{"b":1,"10":2,"9":3,"a":4}`
//!   encodes as `{"9":3,"10":2,"a":4,"b":1}` and every JavaScript implementation of the
//!   contract hashes the same value to the same digest. `"01"`, `"-1"` and `"4294967295"` are
//!   ordinary keys;
//! * no whitespace; strings escaped exactly as `JSON.stringify` escapes them (only `"`, `\` and
//!   U+0000..U+001F, with `\b \f \n \r \t` where they exist and lowercase `\u00xx` otherwise);
//! * numbers are safe integers only: no fraction or exponent (even `1.0`), no `-0`, nothing
//!   beyond ±(2^53 - 1);
//! * strings and keys must be well-formed Unicode: an escaped unpaired surrogate is rejected;
//! * a key may appear once per object (JSON text with a repeated key is rejected rather than
//!   silently resolved).
//!
//! A document with several problems reports one of them (in practice the first met in a single
//! left-to-right pass); each problem alone always yields its own code.
//!
//! The frame is `agent-intercom-canonical-frame-v1:<L(domain)>:<domain>:<L(payload)>:<payload>`
//! with `L` the UTF-8 byte length in decimal, and the hash is the lowercase hex SHA-256 of it.

use std::borrow::Cow;
use std::cmp::Ordering;

use sha2::{Digest, Sha256};

use crate::error::{Error, ErrorCode};

/// Prefix of every canonical frame.
pub const FRAME_PREFIX: &str = "agent-intercom-canonical-frame-v1";
/// Canonical encoding version.
pub const ENCODING_VERSION: u32 = 1;
/// Strings are encoded exactly as supplied: no NFC/NFD normalization.
pub const UNICODE_NORMALIZATION: &str = "none";
/// Largest integer magnitude canonical JSON accepts (JavaScript's `Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;
/// Deepest nesting of arrays and objects accepted (the top-level value is depth 1).
pub const MAX_DEPTH: usize = 128;
/// Length of a hex SHA-256 digest.
pub const HASH_HEX_LEN: usize = 64;

/// A JSON value in the canonical data model. Strings borrow from the parsed text when they
/// hold no escapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A safe integer (checked when encoded).
    Int(i64),
    /// A string.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Value<'a>>),
    /// An object's members in source order (sorted when encoded).
    Object(Vec<(Cow<'a, str>, Value<'a>)>),
}

impl<'a> Value<'a> {
    /// The member `key` of an object (the first, if repeated).
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        match self {
            Value::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The items, if this is an array.
    pub fn as_array(&self) -> Option<&[Value<'a>]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The integer, if this is one.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// True for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The same value with its strings owned (no borrow of the parsed text).
    pub fn owned(&self) -> Value<'static> {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(*b),
            Value::Int(n) => Value::Int(*n),
            Value::String(s) => Value::String(Cow::Owned(s.to_string())),
            Value::Array(items) => Value::Array(items.iter().map(Value::owned).collect()),
            Value::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (Cow::Owned(k.to_string()), v.owned()))
                    .collect(),
            ),
        }
    }
}

/// Parses JSON text strictly into the canonical data model (see the module docs for what is
/// rejected, and with which [`ErrorCode`]).
pub fn parse(text: &str) -> Result<Value<'_>, Error> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    parser.skip_ws();
    let value = parser.value(1).map_err(Fault::into_error)?;
    parser.skip_ws();
    if parser.pos != parser.bytes.len() {
        return Err(parser
            .syntax("unexpected data after the JSON value")
            .into_error());
    }
    Ok(value)
}

/// Canonical JSON of a value.
pub fn canonical_json(value: &Value<'_>) -> Result<String, Error> {
    let mut out = String::new();
    encode(value, &mut out, 1).map_err(Fault::into_error)?;
    Ok(out)
}

/// Canonical JSON of a JSON document.
///
/// Streams: the document is validated and re-emitted in one pass without building a tree;
/// only objects whose keys are out of order are rewritten in place. The result is the same as
/// `canonical_json(&parse(text)?)` (a test holds the two paths equal).
pub fn canonical_json_of_text(text: &str) -> Result<String, Error> {
    let mut canon = Canon {
        parser: Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        },
        out: String::with_capacity(text.len()),
        members: Vec::new(),
        scratch: String::new(),
    };
    canon.parser.skip_ws();
    canon.value(1).map_err(Fault::into_error)?;
    canon.parser.skip_ws();
    if canon.parser.pos != text.len() {
        return Err(canon
            .parser
            .syntax("unexpected data after the JSON value")
            .into_error());
    }
    Ok(canon.out)
}

/// Checks a hash domain: non-empty printable ASCII without whitespace (0x21..=0x7E).
pub fn validate_domain(domain: &str) -> Result<(), Error> {
    if !domain.is_empty() && domain.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::InvalidDomain,
            "domain must be non-empty printable ASCII without whitespace",
        ))
    }
}

/// The canonical frame of an already canonical payload.
pub fn frame_of_payload(domain: &str, payload: &str) -> Result<Vec<u8>, Error> {
    validate_domain(domain)?;
    let header = format!(
        "{FRAME_PREFIX}:{}:{domain}:{}:",
        domain.len(),
        payload.len()
    );
    let mut frame = Vec::with_capacity(header.len() + payload.len());
    frame.extend_from_slice(header.as_bytes());
    frame.extend_from_slice(payload.as_bytes());
    Ok(frame)
}

/// The lowercase hex SHA-256 of the canonical frame of an already canonical payload.
pub fn hash_of_payload(domain: &str, payload: &str) -> Result<String, Error> {
    validate_domain(domain)?;
    let mut hasher = Sha256::new();
    hasher.update(FRAME_PREFIX.as_bytes());
    hasher.update(format!(":{}:{domain}:{}:", domain.len(), payload.len()).as_bytes());
    hasher.update(payload.as_bytes());
    Ok(to_hex(&hasher.finalize()))
}

/// The canonical frame of a value.
pub fn canonical_frame(domain: &str, value: &Value<'_>) -> Result<Vec<u8>, Error> {
    validate_domain(domain)?;
    frame_of_payload(domain, &canonical_json(value)?)
}

/// The canonical hash of a value.
pub fn canonical_hash(domain: &str, value: &Value<'_>) -> Result<String, Error> {
    validate_domain(domain)?;
    hash_of_payload(domain, &canonical_json(value)?)
}

/// The canonical hash of a JSON document.
pub fn canonical_hash_of_text(domain: &str, text: &str) -> Result<String, Error> {
    validate_domain(domain)?;
    hash_of_payload(domain, &canonical_json_of_text(text)?)
}

/// Lowercase hexadecimal of `bytes` (a digest's usual text form).
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

/// JavaScript's array-index keys: the canonical decimal form of an integer below 2^32 - 1.
fn array_index(key: &str) -> Option<u32> {
    let bytes = key.as_bytes();
    match bytes {
        [b'0'] => Some(0),
        [b'1'..=b'9', rest @ ..] if rest.len() < 10 && rest.iter().all(u8::is_ascii_digit) => key
            .parse::<u64>()
            .ok()
            .filter(|&n| n < u32::MAX as u64)
            .map(|n| n as u32),
        _ => None,
    }
}

/// Order of keys as a JavaScript object enumerates them after sorted insertion.
pub fn compare_keys(a: &str, b: &str) -> Ordering {
    match (array_index(a), array_index(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => compare_utf16(a, b),
    }
}

/// Compares two strings by their UTF-16 code units (JavaScript's default sort order).
pub fn compare_utf16(a: &str, b: &str) -> Ordering {
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let mut start = common;
    while !a.is_char_boundary(start) {
        start -= 1;
    }
    match (a[start..].chars().next(), b[start..].chars().next()) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => first_utf16_unit(x)
            .cmp(&first_utf16_unit(y))
            .then((x as u32).cmp(&(y as u32))),
    }
}

fn first_utf16_unit(c: char) -> u32 {
    let cp = c as u32;
    if cp >= 0x1_0000 {
        0xd800 + ((cp - 0x1_0000) >> 10)
    } else {
        cp
    }
}

mod encode;
mod parse;
mod stream;
#[cfg(test)]
mod tests;

use encode::{Fault, encode};
// The JSON string escaping, shared with the contract's writer and snapshot parser.
pub(crate) use encode::{escape_into, plain_prefix};
use parse::Parser;
use stream::Canon;
