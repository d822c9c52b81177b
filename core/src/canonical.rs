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

/// An object member already written to the output: `"key":value` occupies `start..end`.
struct Member<'a> {
    key: Cow<'a, str>,
    start: usize,
    end: usize,
}

/// The streaming canonicalizer behind [`canonical_json_of_text`].
struct Canon<'a> {
    parser: Parser<'a>,
    out: String,
    /// Members of the objects being read, innermost last.
    members: Vec<Member<'a>>,
    scratch: String,
}

impl<'a> Canon<'a> {
    fn value(&mut self, depth: usize) -> Result<(), Fault> {
        let start = self.parser.pos;
        match self.parser.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => {
                let s = self.parser.string()?;
                write_string(&s, &mut self.out);
                Ok(())
            }
            Some(_) => {
                // Literals and numbers are written exactly as validated: their accepted
                // spelling is already the canonical one.
                self.parser.value(depth)?;
                self.out.push_str(&self.parser.text[start..self.parser.pos]);
                Ok(())
            }
            None => Err(self.parser.syntax("unexpected end of input")),
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), Fault> {
        check_depth(depth)?;
        self.parser.pos += 1;
        self.out.push('[');
        self.parser.skip_ws();
        if self.parser.peek() == Some(b']') {
            self.parser.pos += 1;
            self.out.push(']');
            return Ok(());
        }
        let mut index = 0;
        loop {
            self.parser.skip_ws();
            if index > 0 {
                self.out.push(',');
            }
            self.value(depth + 1).map_err(|f| f.at(Seg::Index(index)))?;
            index += 1;
            self.parser.skip_ws();
            match self.parser.peek() {
                Some(b',') => self.parser.pos += 1,
                Some(b']') => {
                    self.parser.pos += 1;
                    self.out.push(']');
                    return Ok(());
                }
                _ => return Err(self.parser.syntax("expected ',' or ']'")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), Fault> {
        check_depth(depth)?;
        self.parser.pos += 1;
        self.out.push('{');
        let base = self.members.len();
        self.parser.skip_ws();
        if self.parser.peek() == Some(b'}') {
            self.parser.pos += 1;
            self.out.push('}');
            return Ok(());
        }
        loop {
            self.parser.skip_ws();
            if self.parser.peek() != Some(b'"') {
                return Err(self.parser.syntax("expected a string key"));
            }
            let key = self
                .parser
                .string()
                .map_err(|f| f.at(Seg::Key("[key]".into())))?;
            self.parser.skip_ws();
            self.parser.expect(b':', "expected ':'")?;
            self.parser.skip_ws();
            if self.members.len() > base {
                self.out.push(',');
            }
            let start = self.out.len();
            write_string(&key, &mut self.out);
            self.out.push(':');
            if let Err(fault) = self.value(depth + 1) {
                return Err(fault.at(Seg::Key(key.into_owned())));
            }
            self.members.push(Member {
                key,
                start,
                end: self.out.len(),
            });
            self.parser.skip_ws();
            match self.parser.peek() {
                Some(b',') => self.parser.pos += 1,
                Some(b'}') => {
                    self.parser.pos += 1;
                    break;
                }
                _ => return Err(self.parser.syntax("expected ',' or '}'")),
            }
        }
        let members = &mut self.members[base..];
        if !members
            .windows(2)
            .all(|w| compare_keys(&w[0].key, &w[1].key) == Ordering::Less)
        {
            let region = members[0].start;
            members.sort_by(|x, y| compare_keys(&x.key, &y.key));
            if let Some(pair) = members.windows(2).find(|w| w[0].key == w[1].key) {
                return Err(
                    Fault::new(ErrorCode::DuplicateKey, "key appears more than once")
                        .at(Seg::Key(pair[0].key.to_string())),
                );
            }
            self.scratch.clear();
            self.scratch.push_str(&self.out[region..]);
            self.out.truncate(region);
            for (i, m) in members.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.out
                    .push_str(&self.scratch[m.start - region..m.end - region]);
            }
        }
        self.members.truncate(base);
        self.out.push('}');
        Ok(())
    }
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

fn to_hex(bytes: &[u8]) -> String {
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

/// Where a fault happened: built while unwinding, so the success path pays nothing for it.
enum Seg {
    Key(String),
    Index(usize),
}

struct Fault {
    code: ErrorCode,
    message: String,
    offset: Option<usize>,
    path: Vec<Seg>,
}

impl Fault {
    fn new(code: ErrorCode, message: impl Into<String>) -> Fault {
        Fault {
            code,
            message: message.into(),
            offset: None,
            path: Vec::new(),
        }
    }

    fn at(mut self, seg: Seg) -> Fault {
        self.path.push(seg);
        self
    }

    fn into_error(self) -> Error {
        let mut path = String::from("$");
        for seg in self.path.iter().rev() {
            match seg {
                Seg::Key(k) => {
                    path.push('.');
                    path.push_str(k);
                }
                Seg::Index(i) => path.push_str(&format!("[{i}]")),
            }
        }
        let message = match self.offset {
            Some(offset) => format!("{path}: {} (at byte {offset})", self.message),
            None => format!("{path}: {}", self.message),
        };
        Error::new(self.code, message)
    }
}

fn check_depth(depth: usize) -> Result<(), Fault> {
    if depth > MAX_DEPTH {
        Err(Fault::new(
            ErrorCode::NestingTooDeep,
            format!("nesting deeper than {MAX_DEPTH} levels"),
        ))
    } else {
        Ok(())
    }
}

fn encode(value: &Value<'_>, out: &mut String, depth: usize) -> Result<(), Fault> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Int(n) => {
            if n.unsigned_abs() > MAX_SAFE_INTEGER as u64 {
                return Err(Fault::new(
                    ErrorCode::UnsupportedNumber,
                    "number must be a safe integer",
                ));
            }
            out.push_str(&n.to_string());
        }
        Value::String(s) => escape_into(s, out),
        Value::Array(items) => {
            check_depth(depth)?;
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                encode(item, out, depth + 1).map_err(|f| f.at(Seg::Index(i)))?;
            }
            out.push(']');
        }
        Value::Object(members) => {
            check_depth(depth)?;
            let mut order: Vec<&(Cow<'_, str>, Value<'_>)> = members.iter().collect();
            order.sort_by(|x, y| compare_keys(&x.0, &y.0));
            if let Some(pair) = order.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(
                    Fault::new(ErrorCode::DuplicateKey, "key appears more than once")
                        .at(Seg::Key(pair[0].0.to_string())),
                );
            }
            out.push('{');
            for (i, (key, item)) in order.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                escape_into(key, out);
                out.push(':');
                encode(item, out, depth + 1).map_err(|f| f.at(Seg::Key(key.to_string())))?;
            }
            out.push('}');
        }
    }
    Ok(())
}

fn escape_into(s: &str, out: &mut String) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escaped: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escaped.is_empty() {
            const DIGITS: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(DIGITS[(b >> 4) as usize] as char);
            out.push(DIGITS[(b & 15) as usize] as char);
        } else {
            out.push_str(escaped);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Bytes that end the fast scan of a string: the quote, the backslash and control characters.
static SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Length of the longest prefix without a quote, backslash or control character. Checks eight
/// bytes at a time (a word holds such a byte when one of the classic "has a zero byte" tests
/// fires), then finishes byte by byte.
fn plain_prefix(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut i = 0;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let hits = has_zero(x ^ (ONES * b'"' as u64))
            | has_zero(x ^ (ONES * b'\\' as u64))
            | (x.wrapping_sub(ONES * 0x20) & !x & HIGH);
        if hits != 0 {
            break;
        }
        i += 8;
    }
    i + bytes[i..]
        .iter()
        .position(|&b| SPECIAL[b as usize])
        .unwrap_or(bytes.len() - i)
}

/// Writes a string exactly as [`escape_into`] would. A string borrowed from the input holds no
/// quote, backslash or control character (the parser checked), so it needs no escaping.
#[allow(clippy::ptr_arg)] // the variant (borrowed or decoded) is the information
fn write_string(s: &Cow<'_, str>, out: &mut String) {
    match s {
        Cow::Borrowed(raw) => {
            out.push('"');
            out.push_str(raw);
            out.push('"');
        }
        Cow::Owned(decoded) => escape_into(decoded, out),
    }
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn syntax(&self, message: &str) -> Fault {
        let mut fault = Fault::new(ErrorCode::InvalidJson, format!("invalid JSON: {message}"));
        fault.offset = Some(self.pos);
        fault
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), Fault> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.syntax(what))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value<'a>, Fault> {
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.syntax("expected a value")),
            None => Err(self.syntax("unexpected end of input")),
        }
    }

    fn literal(&mut self, word: &str, value: Value<'a>) -> Result<Value<'a>, Fault> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.syntax("expected a value"))
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Value<'a>, Fault> {
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        let int_start = self.pos;
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(self.syntax("leading zero in a number"));
                }
            }
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.syntax("expected a digit")),
        }
        let int_digits = &self.text[int_start..self.pos];
        let mut fractional = false;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.syntax("expected a digit after '.'"));
            }
            fractional = true;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.syntax("expected a digit in the exponent"));
            }
            fractional = true;
        }
        let unsupported = |message: String| {
            let mut fault = Fault::new(ErrorCode::UnsupportedNumber, message);
            fault.offset = Some(start);
            Err(fault)
        };
        if fractional {
            return unsupported(
                "number must be a safe integer written without fraction or exponent".into(),
            );
        }
        let magnitude = if int_digits.len() > 16 {
            None
        } else {
            int_digits.parse::<i64>().ok()
        };
        match magnitude {
            Some(0) if negative => unsupported("number must not be negative zero".into()),
            Some(n) if n <= MAX_SAFE_INTEGER => Ok(Value::Int(if negative { -n } else { n })),
            _ => unsupported(format!(
                "number must be a safe integer (|n| <= {MAX_SAFE_INTEGER})"
            )),
        }
    }

    fn hex4(&mut self) -> Result<u32, Fault> {
        let Some(chunk) = self.bytes.get(self.pos..self.pos + 4) else {
            return Err(self.syntax("truncated \\u escape"));
        };
        let mut value = 0u32;
        for &b in chunk {
            let digit = (b as char)
                .to_digit(16)
                .ok_or_else(|| self.syntax("invalid \\u escape"))?;
            value = value * 16 + digit;
        }
        self.pos += 4;
        Ok(value)
    }

    fn string(&mut self) -> Result<Cow<'a, str>, Fault> {
        self.pos += 1; // opening quote
        let start = self.pos;
        // Fast path: skip ordinary bytes in bulk, then look at the one that stopped the scan.
        loop {
            self.pos += plain_prefix(&self.bytes[self.pos..]);
            match self.peek() {
                Some(b'"') => {
                    let s = &self.text[start..self.pos];
                    self.pos += 1;
                    return Ok(Cow::Borrowed(s));
                }
                Some(b'\\') => break,
                Some(0x00..=0x1f) => {
                    return Err(self.syntax("unescaped control character in a string"));
                }
                Some(_) => self.pos += 1,
                None => return Err(self.syntax("unterminated string")),
            }
        }
        let mut owned = String::from(&self.text[start..self.pos]);
        loop {
            let chunk_start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            owned.push_str(&self.text[chunk_start..self.pos]);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Cow::Owned(owned));
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let escape = self
                        .peek()
                        .ok_or_else(|| self.syntax("unterminated string"))?;
                    self.pos += 1;
                    match escape {
                        b'"' => owned.push('"'),
                        b'\\' => owned.push('\\'),
                        b'/' => owned.push('/'),
                        b'b' => owned.push('\u{8}'),
                        b'f' => owned.push('\u{c}'),
                        b'n' => owned.push('\n'),
                        b'r' => owned.push('\r'),
                        b't' => owned.push('\t'),
                        b'u' => {
                            let unit = self.hex4()?;
                            let code = match unit {
                                0xd800..=0xdbff => {
                                    if self.bytes[self.pos..].starts_with(b"\\u") {
                                        self.pos += 2;
                                        let low = self.hex4()?;
                                        if !(0xdc00..=0xdfff).contains(&low) {
                                            return Err(Fault::new(
                                                ErrorCode::UnpairedSurrogate,
                                                "string contains an unpaired high surrogate",
                                            ));
                                        }
                                        0x1_0000 + ((unit - 0xd800) << 10) + (low - 0xdc00)
                                    } else {
                                        return Err(Fault::new(
                                            ErrorCode::UnpairedSurrogate,
                                            "string contains an unpaired high surrogate",
                                        ));
                                    }
                                }
                                0xdc00..=0xdfff => {
                                    return Err(Fault::new(
                                        ErrorCode::UnpairedSurrogate,
                                        "string contains an unpaired low surrogate",
                                    ));
                                }
                                _ => unit,
                            };
                            owned.push(char::from_u32(code).expect("surrogates handled above"));
                        }
                        _ => return Err(self.syntax("invalid escape")),
                    }
                }
                Some(_) => return Err(self.syntax("unescaped control character in a string")),
                None => return Err(self.syntax("unterminated string")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value<'a>, Fault> {
        check_depth(depth)?;
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_ws();
            let index = items.len();
            items.push(self.value(depth + 1).map_err(|f| f.at(Seg::Index(index)))?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.syntax("expected ',' or ']'")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value<'a>, Fault> {
        check_depth(depth)?;
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.syntax("expected a string key"));
            }
            let key = self.string().map_err(|f| f.at(Seg::Key("[key]".into())))?;
            self.skip_ws();
            self.expect(b':', "expected ':'")?;
            self.skip_ws();
            let value = self
                .value(depth + 1)
                .map_err(|f| f.at(Seg::Key(key.to_string())))?;
            members.push((key, value));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.syntax("expected ',' or '}'")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> ErrorCode {
        canonical_json_of_text(text).unwrap_err().code()
    }

    #[test]
    fn known_answer() {
        assert_eq!(
            canonical_hash_of_text("boss-test-v1", r#"{"b":2,"a":1}"#).unwrap(),
            "4ff6c078039d0d494b220a4dafa919c183136d4cf7e303eed1bc642ab0b8e4c2"
        );
    }

    #[test]
    fn sorts_and_escapes_like_javascript() {
        assert_eq!(
            canonical_json_of_text(
                r#" { "b" : [1, {"d":null,"c":true}], "a":"x\u0001\/\u007f\u2028" } "#
            )
            .unwrap(),
            "{\"a\":\"x\\u0001/\u{7f}\u{2028}\",\"b\":[1,{\"c\":true,\"d\":null}]}"
        );
        assert_eq!(
            canonical_json_of_text(r#""\b\f\n\r\t\"\\\u001f""#).unwrap(),
            r#""\b\f\n\r\t\"\\\u001f""#
        );
        // U+FF61 sorts after U+1F600 in UTF-8 byte order but before it in UTF-16 order.
        assert_eq!(
            canonical_json_of_text("{\"\u{ff61}\":1,\"\u{1f600}\":2}").unwrap(),
            "{\"\u{1f600}\":2,\"\u{ff61}\":1}"
        );
    }

    #[test]
    fn integer_like_keys_follow_javascript() {
        assert_eq!(
            canonical_json_of_text(
                r#"{"b":1,"10":2,"9":3,"a":4,"01":5,"-1":6,"4294967295":7,"4294967294":8}"#
            )
            .unwrap(),
            r#"{"9":3,"10":2,"4294967294":8,"-1":6,"01":5,"4294967295":7,"a":4,"b":1}"#
        );
    }

    #[test]
    fn rejections_have_stable_codes() {
        assert_eq!(code("1.5"), ErrorCode::UnsupportedNumber);
        assert_eq!(code("1.0"), ErrorCode::UnsupportedNumber);
        assert_eq!(code("1e3"), ErrorCode::UnsupportedNumber);
        assert_eq!(code("-0"), ErrorCode::UnsupportedNumber);
        assert_eq!(code("9007199254740992"), ErrorCode::UnsupportedNumber);
        assert_eq!(code("-9007199254740992"), ErrorCode::UnsupportedNumber);
        assert_eq!(
            code("123456789012345678901234567890"),
            ErrorCode::UnsupportedNumber
        );
        assert_eq!(
            canonical_json_of_text("-9007199254740991").unwrap(),
            "-9007199254740991"
        );
        assert_eq!(code(r#""\ud800""#), ErrorCode::UnpairedSurrogate);
        assert_eq!(code(r#""\udc00x""#), ErrorCode::UnpairedSurrogate);
        assert_eq!(code(r#"{"\ud800\u0041":1}"#), ErrorCode::UnpairedSurrogate);
        assert_eq!(code(r#"{"a":1,"a":1}"#), ErrorCode::DuplicateKey);
        for bad in [
            "",
            "{",
            "[1,]",
            "01",
            "1.",
            "tru",
            "\"a",
            "\"\u{1}\"",
            "{\"a\" 1}",
            "[1] x",
            "\"\\x\"",
        ] {
            assert_eq!(code(bad), ErrorCode::InvalidJson, "{bad:?}");
        }
        assert_eq!(code(&"[".repeat(MAX_DEPTH + 1)), ErrorCode::NestingTooDeep);
        let deep_ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(canonical_json_of_text(&deep_ok).is_ok());
    }

    #[test]
    fn errors_carry_a_path() {
        let err = canonical_json_of_text(r#"{"a":[0,{"b":1.5}]}"#).unwrap_err();
        assert!(
            err.message().starts_with("$.a[1].b: number must be"),
            "{}",
            err.message()
        );
        let err = canonical_json_of_text(r#"{"a":1,"a":2}"#).unwrap_err();
        assert!(
            err.message().starts_with("$.a: key appears more than once"),
            "{}",
            err.message()
        );
    }

    #[test]
    fn domain_rules() {
        for bad in ["", "a b", "tab\t", "é"] {
            assert_eq!(
                canonical_hash_of_text(bad, "1").unwrap_err().code(),
                ErrorCode::InvalidDomain
            );
        }
        let frame =
            canonical_frame("d", &Value::Object(vec![("é".into(), Value::Int(1))])).unwrap();
        assert_eq!(
            frame,
            "agent-intercom-canonical-frame-v1:1:d:8:{\"é\":1}".as_bytes()
        );
    }

    #[test]
    fn value_encoder_checks_ranges() {
        assert_eq!(
            canonical_json(&Value::Int(MAX_SAFE_INTEGER + 1))
                .unwrap_err()
                .code(),
            ErrorCode::UnsupportedNumber
        );
        assert_eq!(
            canonical_json(&Value::Int(i64::MIN)).unwrap_err().code(),
            ErrorCode::UnsupportedNumber
        );
    }

    #[test]
    fn utf16_order() {
        assert_eq!(compare_utf16("a", "ab"), Ordering::Less);
        assert_eq!(compare_utf16("\u{e000}", "\u{10000}"), Ordering::Greater);
        assert_eq!(compare_utf16("\u{10000}", "\u{10001}"), Ordering::Less);
        assert_eq!(compare_utf16("Z", "a"), Ordering::Less);
    }
}

#[cfg(test)]
mod streaming_tests {
    use super::*;

    /// A small deterministic generator of JSON texts, valid and invalid, to hold the streaming
    /// canonicalizer equal to parse-then-encode.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[(self.next() % items.len() as u64) as usize]
        }

        fn doc(&mut self, depth: usize, out: &mut String) {
            let choice = if depth > 4 {
                self.next() % 4
            } else {
                self.next() % 7
            };
            match choice {
                0 => out.push_str(self.pick(&[
                    "0",
                    "-1",
                    "42",
                    "9007199254740991",
                    "1.5",
                    "-0",
                    "1e2",
                    "007",
                ])),
                1 => out.push_str(self.pick(&["true", "false", "null", "nul"])),
                2 | 3 => out.push_str(self.pick(&[
                    "\"a\"",
                    "\"\"",
                    "\"\\u00e9\\n\"",
                    "\"\\ud83d\\ude00\"",
                    "\"\\ud800\"",
                    "\"é\u{2028}\"",
                    "\"\\/\\u001F\"",
                    "\"10\"",
                ])),
                4 => {
                    out.push('[');
                    for i in 0..self.next() % 4 {
                        if i > 0 {
                            out.push_str(self.pick(&[",", " , ", ","]));
                        }
                        self.doc(depth + 1, out);
                    }
                    out.push(']');
                }
                _ => {
                    out.push('{');
                    for i in 0..self.next() % 5 {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str(self.pick(&[
                            "\"b\"",
                            "\"a\"",
                            "\"10\"",
                            "\"9\"",
                            "\"\\u0061\"",
                            "\"\u{ff61}\"",
                            "\"\u{1f600}\"",
                            "\"\\ud800\"",
                        ]));
                        out.push_str(self.pick(&[":", " : "]));
                        self.doc(depth + 1, out);
                    }
                    out.push('}');
                }
            }
        }
    }

    #[test]
    fn streaming_equals_parse_then_encode() {
        let mut generator = Gen(0x9e37_79b9_7f4a_7c15);
        let (mut ok, mut err) = (0, 0);
        for _ in 0..20_000 {
            let mut text = String::new();
            generator.doc(0, &mut text);
            let streamed = canonical_json_of_text(&text);
            let via_tree = parse(&text).and_then(|v| canonical_json(&v));
            match (&streamed, &via_tree) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{text}");
                    ok += 1;
                }
                (Err(_), Err(_)) => {
                    // A document with several problems may report any one of them.
                    err += 1;
                }
                _ => panic!("{text}: {streamed:?} vs {via_tree:?}"),
            }
        }
        assert!(ok > 1000 && err > 1000, "{ok} ok, {err} errors");
    }

    #[test]
    fn plain_prefix_finds_every_special_byte_at_every_offset() {
        for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
            for len in 0..40 {
                for at in 0..=len {
                    let mut bytes = vec![b'a'; len];
                    bytes.extend_from_slice("é\u{7f}".as_bytes());
                    if at < len {
                        bytes[at] = special;
                    }
                    let expected = if at < len { at } else { bytes.len() };
                    assert_eq!(
                        plain_prefix(&bytes),
                        expected,
                        "special {special:#x} at {at} of {len}"
                    );
                }
            }
        }
    }

    #[test]
    fn corpus_streams_identically() {
        let text = crate::corpus::CORPUS_JSON;
        assert_eq!(
            canonical_json_of_text(text).unwrap(),
            canonical_json(&parse(text).unwrap()).unwrap()
        );
    }
}
