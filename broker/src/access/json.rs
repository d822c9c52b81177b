//! JSON as `JSON.parse` and `JSON.stringify` see it, for the files the Pi broker shares with us.
//!
//! `serde_json` (without `preserve_order`) sorts object keys and rounds some floats; the access
//! file must come back byte for byte as the TypeScript broker writes it, including records it
//! loaded from an older or hand-edited file. So this module keeps objects in JavaScript property
//! order (array-index keys first, ascending, then the rest in insertion order; a repeated key keeps
//! its first place and takes the last value), holds numbers as `f64`, and prints them as
//! `Number.prototype.toString` does.

use std::fmt::Write as _;

/// A parsed JSON value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Value>),
    Object(Object),
}

/// An object in JavaScript property order.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Object {
    entries: Vec<(String, Value)>,
}

/// The largest integer a JavaScript number holds exactly (`Number.MAX_SAFE_INTEGER`).
pub(crate) const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// `Number.isSafeInteger` for a value already known to be an integer.
pub(crate) fn is_safe_integer(value: i64) -> bool {
    (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&value)
}

/// A key JavaScript orders numerically before all others: a canonical decimal below 2^32 - 1.
pub(crate) fn array_index(key: &str) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    u32::try_from(n).ok().filter(|&n| n != u32::MAX)
}

impl Object {
    pub(crate) fn new() -> Object {
        Object::default()
    }

    /// Sets `key` as a JavaScript assignment does: in place if present, else at its property-order
    /// position.
    pub(crate) fn insert(&mut self, key: String, value: Value) {
        if let Some(slot) = self.entries.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = value;
            return;
        }
        let at = match array_index(&key) {
            Some(n) => self
                .entries
                .iter()
                .position(|(k, _)| array_index(k).is_none_or(|m| m > n))
                .unwrap_or(self.entries.len()),
            None => self.entries.len(),
        };
        self.entries.insert(at, (key, value));
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }
}

impl Value {
    pub(crate) fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value as an integer when it is a number with no fractional part that fits an `i64`
    /// (JSON `3.0` is the JavaScript number 3).
    pub(crate) fn as_integer(&self) -> Option<i64> {
        match *self {
            // i64::MAX as f64 rounds up to 2^63, so the upper bound is exclusive.
            Value::Number(n) if n.fract() == 0.0 && n >= -(2f64.powi(63)) && n < 2f64.powi(63) => {
                Some(n as i64)
            }
            _ => None,
        }
    }
}

/// Why a text is not JSON, with the byte offset.
#[derive(Debug)]
pub(crate) struct ParseError {
    pub(crate) offset: usize,
    pub(crate) what: &'static str,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.what, self.offset)
    }
}

/// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH: usize = 256;

/// Parses a complete JSON text (whitespace around it allowed, as `JSON.parse`).
pub(crate) fn parse(text: &str) -> Result<Value, ParseError> {
    let mut p = Parser {
        bytes: text.as_bytes(),
        text,
        at: 0,
    };
    p.skip_ws();
    let value = p.value(0)?;
    p.skip_ws();
    if p.at != p.bytes.len() {
        return Err(p.error("unexpected text after the JSON value"));
    }
    Ok(value)
}

struct Parser<'t> {
    bytes: &'t [u8],
    text: &'t str,
    at: usize,
}

impl Parser<'_> {
    fn error(&self, what: &'static str) -> ParseError {
        ParseError {
            offset: self.at,
            what,
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.bytes.get(self.at) == Some(&b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, ParseError> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("unexpected token"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nesting too deep"));
        }
        match self.bytes.get(self.at) {
            None => Err(self.error("unexpected end of JSON input")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("unexpected token")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.at += 1;
        let mut object = Object::new();
        self.skip_ws();
        if self.eat(b'}') {
            return Ok(Value::Object(object));
        }
        loop {
            self.skip_ws();
            if self.bytes.get(self.at) != Some(&b'"') {
                return Err(self.error("expected a property name"));
            }
            let key = self.string()?;
            self.skip_ws();
            if !self.eat(b':') {
                return Err(self.error("expected ':' after a property name"));
            }
            self.skip_ws();
            let value = self.value(depth + 1)?;
            object.insert(key, value);
            self.skip_ws();
            if self.eat(b'}') {
                return Ok(Value::Object(object));
            }
            if !self.eat(b',') {
                return Err(self.error("expected ',' or '}' in an object"));
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.eat(b']') {
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            if self.eat(b']') {
                return Ok(Value::Array(items));
            }
            if !self.eat(b',') {
                return Err(self.error("expected ',' or ']' in an array"));
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.bytes.get(self.at), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.at;
        self.eat(b'-');
        if self.eat(b'0') {
            if matches!(self.bytes.get(self.at), Some(b'0'..=b'9')) {
                return Err(self.error("leading zero in a number"));
            }
        } else if self.digits() == 0 {
            return Err(self.error("expected a digit"));
        }
        if self.eat(b'.') && self.digits() == 0 {
            return Err(self.error("expected a digit after '.'"));
        }
        if self.eat(b'e') || self.eat(b'E') {
            if !self.eat(b'+') {
                self.eat(b'-');
            }
            if self.digits() == 0 {
                return Err(self.error("expected a digit in the exponent"));
            }
        }
        // Rust's float parsing rounds correctly, as JavaScript's does.
        let n: f64 = self.text[start..self.at]
            .parse()
            .map_err(|_| self.error("invalid number"))?;
        Ok(Value::Number(n))
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.error("truncated \\u escape"))?;
        let mut n = 0;
        for &d in digits {
            n = n * 16
                + (d as char)
                    .to_digit(16)
                    .ok_or_else(|| self.error("invalid \\u escape"))?;
        }
        self.at += 4;
        Ok(n)
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let run = self.at;
            while let Some(&b) = self.bytes.get(self.at) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            // The input is a &str and the run stops only at ASCII, so it is whole characters.
            out.push_str(&self.text[run..self.at]);
            match self.bytes.get(self.at) {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let escape = self.bytes.get(self.at).copied();
                    self.at += 1;
                    match escape {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => out.push(self.unicode_escape()?),
                        _ => {
                            self.at -= 1;
                            return Err(self.error("invalid escape"));
                        }
                    }
                }
                Some(_) => return Err(self.error("control character in a string")),
            }
        }
    }

    fn unicode_escape(&mut self) -> Result<char, ParseError> {
        let first = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&first) {
            if !(self.eat(b'\\') && self.eat(b'u')) {
                return Err(self.error("lone surrogate in a string"));
            }
            let second = self.hex4()?;
            if !(0xDC00..0xE000).contains(&second) {
                return Err(self.error("lone surrogate in a string"));
            }
            0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        } else {
            first
        };
        char::from_u32(code).ok_or_else(|| self.error("lone surrogate in a string"))
    }
}

/// Appends `s` as a JSON string literal, escaped as `JSON.stringify` escapes it (the core's
/// writer).
pub(crate) fn write_string(out: &mut String, s: &str) {
    agent_intercom_core::contract::value::write_json_string(out, s);
}

/// Appends an integer as JavaScript prints a safe integer.
pub(crate) fn write_integer(out: &mut String, n: i64) {
    let _ = write!(out, "{n}");
}

/// Appends `n` as `JSON.stringify` prints it: `Number.prototype.toString` (the core's), `null`
/// for a number that is not finite.
pub(crate) fn write_number(out: &mut String, n: f64) {
    if n.is_finite() {
        out.push_str(&agent_intercom_core::contract::value::number_to_string(n));
    } else {
        out.push_str("null");
    }
}

/// Appends `value` as `JSON.stringify(value)` writes it (no whitespace).
pub(crate) fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, *n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(object) => {
            out.push('{');
            for (i, (key, item)) in object.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

/// Builds a JSON object text member by member, in the order the members are added.
pub(crate) struct ObjectWriter<'o> {
    out: &'o mut String,
    first: bool,
}

impl<'o> ObjectWriter<'o> {
    pub(crate) fn new(out: &'o mut String) -> ObjectWriter<'o> {
        out.push('{');
        ObjectWriter { out, first: true }
    }

    /// Writes the key and returns the buffer for the value.
    pub(crate) fn key(&mut self, key: &str) -> &mut String {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        write_string(self.out, key);
        self.out.push(':');
        self.out
    }

    pub(crate) fn string(&mut self, key: &str, value: &str) {
        let out = self.key(key);
        write_string(out, value);
    }

    pub(crate) fn integer(&mut self, key: &str, value: i64) {
        let out = self.key(key);
        write_integer(out, value);
    }

    pub(crate) fn bool(&mut self, key: &str, value: bool) {
        self.key(key).push_str(if value { "true" } else { "false" });
    }

    pub(crate) fn value(&mut self, key: &str, value: &Value) {
        let out = self.key(key);
        write_value(out, value);
    }

    pub(crate) fn finish(self) {
        self.out.push('}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        let mut out = String::new();
        write_value(&mut out, &parse(text).expect("valid JSON"));
        out
    }

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        // Each pair is (JSON input, what `JSON.stringify(JSON.parse(input))` gives in Node).
        for (input, expected) in [
            ("0", "0"),
            ("-0", "0"),
            ("3.0", "3"),
            ("1.9e12", "1900000000000"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("123456789012345678901234", "1.2345678901234569e+23"),
            ("1e-7", "1e-7"),
            ("0.000001", "0.000001"),
            ("0.0000012345", "0.0000012345"),
            ("1.5e-7", "1.5e-7"),
            ("2.5", "2.5"),
            ("-12.75", "-12.75"),
            ("0.1", "0.1"),
            ("9007199254740993", "9007199254740992"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ] {
            assert_eq!(round_trip(input), expected, "{input}");
        }
    }

    #[test]
    fn objects_keep_javascript_property_order() {
        assert_eq!(
            round_trip(r#"{"b":1,"10":2,"a":3,"2":4,"01":5,"4294967295":6,"4294967294":7}"#),
            r#"{"2":4,"10":2,"4294967294":7,"b":1,"a":3,"01":5,"4294967295":6}"#
        );
        // A repeated key keeps its first place and takes the last value, as JSON.parse does.
        assert_eq!(round_trip(r#"{"x":1,"y":2,"x":3}"#), r#"{"x":3,"y":2}"#);
    }

    #[test]
    fn strings_escape_as_json_stringify() {
        assert_eq!(
            round_trip(r#""q\"\\\/\b\f\n\r\t\u0001\u001f\u007f\u00e9\u2028\ud83d\ude00""#),
            "\"q\\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}é\u{2028}😀\""
        );
    }

    #[test]
    fn malformed_text_is_refused_with_an_offset() {
        for bad in [
            "",
            "{",
            "{\"a\":}",
            "[1,]",
            "01",
            "1.",
            "-",
            "\"\\x\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"a\nb\"",
            "{} x",
            "\u{feff}{}",
            "NaN",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} must be refused");
        }
        let deep = "[".repeat(MAX_DEPTH + 2);
        assert_eq!(parse(&deep).unwrap_err().what, "nesting too deep");
        let err = parse("{\"a\" 1}").unwrap_err();
        assert_eq!(err.offset, 5);
    }
}
