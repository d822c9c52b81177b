//! [`Js`]: a JavaScript value as the contract's validators see it, and its two text forms.
//!
//! The TypeScript contract validates live JavaScript values: it tells `undefined` from an absent
//! key, `-0` from `0`, an accessor from a data property, a hole from `undefined`, a null-prototype
//! object from a plain one, and it rejects proxies without entering them. JSON keeps none of
//! that, so values reach the core in one of two forms:
//!
//! * **plain JSON** (C, Rust, the vector files): [`Js::parse_json`]. Every value is plain data.
//! * **the snapshot form** (the Node package, `bindings-node/lib/contract.js`): JSON extended with
//!   markers for what JSON cannot hold, written by a walk that reads descriptors and never runs a
//!   getter, a `toJSON` or a proxy trap: [`Js::parse_snapshot`].
//!
//! The snapshot form adds, where a value may stand: `u` undefined, `N` NaN, `I` / `-I` ±Infinity
//! (`-0` is the number text `-0`), `b"digits"` a BigInt, `f` a function, `s` a symbol, `p` a
//! proxy, `h` a property that is not an enumerable data property (an accessor, or hidden); `_` an
//! array hole. An array may start `[!` (it also has non-index or symbol keys); an object may start
//! `{#` (null prototype), `{@` (another prototype; no members are written) and `{!` (it also has
//! symbol keys). Strings are JSON strings whose `\uXXXX` escapes may leave a surrogate unpaired,
//! as JavaScript strings can; the first such surrogate is kept as [`Lone`]. Read with
//! [`Js::parse_snapshot_kept`], `r` also stands for a value parsed earlier (the Node package's
//! deep-frozen values, which cannot change), moved in by the caller.

use std::fmt::Write as _;

use crate::canonical::plain_prefix;

/// The first unpaired surrogate of a string, which the contract reports by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lone {
    /// A high surrogate (U+D800..U+DBFF) without a low one after it.
    High,
    /// A low surrogate (U+DC00..U+DFFF) without a high one before it.
    Low,
}

/// A string: its text (an unpaired surrogate replaced by U+FFFD) and whether it was well formed.
#[derive(Clone, Debug, PartialEq)]
pub struct JsStr {
    /// The text; exact when `lone` is `None`.
    pub text: String,
    /// The first unpaired surrogate, if any.
    pub lone: Option<Lone>,
}

/// An object's prototype, as far as the contract cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    /// `Object.prototype`.
    Plain,
    /// `null`.
    Null,
    /// Anything else (a class instance, a Date, a boxed primitive, ...). Its own members are
    /// kept (a typed array's are not written); readers that want a plain object refuse it.
    Other,
}

/// An object: its prototype, its own string-keyed properties in JavaScript's order (integer
/// keys first) and whether it also has symbol keys.
#[derive(Clone, Debug, PartialEq)]
pub struct JsObject {
    /// The prototype.
    pub proto: Proto,
    /// Own string-keyed properties; a non-data or non-enumerable one is [`Js::Hidden`].
    pub members: Vec<(JsStr, Js)>,
    /// Whether it has own symbol keys.
    pub symbols: bool,
}

/// An array: its elements (`None` for a hole) and whether it has other own keys.
#[derive(Clone, Debug, PartialEq)]
pub struct JsArray {
    /// Elements by index; [`Js::Hidden`] for an accessor or non-enumerable element.
    pub items: Vec<Option<Js>>,
    /// Whether it has own non-index string keys or symbol keys.
    pub extra_keys: bool,
}

/// A JavaScript value.
#[derive(Clone, Debug, PartialEq)]
pub enum Js {
    /// `undefined`.
    Undefined,
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number (NaN, ±Infinity and -0 included).
    Num(f64),
    /// A string.
    Str(JsStr),
    /// A BigInt (its decimal digits).
    BigInt(String),
    /// A function.
    Function,
    /// A symbol.
    Symbol,
    /// A proxy: never entered.
    Proxy,
    /// A property that is not an enumerable data property; its value was not read.
    Hidden,
    /// An array.
    Array(JsArray),
    /// An object.
    Object(JsObject),
}

/// Why a text could not be read as a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// What was wrong.
    pub message: &'static str,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

/// The deepest nesting either text form may hold (arrays and objects; the value is depth 1).
pub const MAX_PARSE_DEPTH: usize = 512;

impl Js {
    /// A well-formed string value.
    pub fn str(text: impl Into<String>) -> Js {
        Js::Str(JsStr {
            text: text.into(),
            lone: None,
        })
    }

    /// A plain object of well-formed keys.
    pub fn object(members: Vec<(&str, Js)>) -> Js {
        Js::Object(JsObject {
            proto: Proto::Plain,
            members: members
                .into_iter()
                .map(|(k, v)| {
                    (
                        JsStr {
                            text: k.to_string(),
                            lone: None,
                        },
                        v,
                    )
                })
                .collect(),
            symbols: false,
        })
    }

    /// A dense array.
    pub fn array(items: Vec<Js>) -> Js {
        Js::Array(JsArray {
            items: items.into_iter().map(Some).collect(),
            extra_keys: false,
        })
    }

    /// Reads plain JSON: no markers; a repeated key keeps its last value, as `JSON.parse` does.
    pub fn parse_json(text: &str) -> Result<Js, SyntaxError> {
        Parser::new(text, false).document()
    }

    /// Reads the snapshot form (see the module documentation).
    pub fn parse_snapshot(text: &str) -> Result<Js, SyntaxError> {
        Parser::new(text, true).document()
    }

    /// Reads the snapshot form in which `r` also stands for a value read earlier: the next one
    /// `kept` gives (moved in, not copied). Returns the value and, for each `r` in order, the
    /// child indices from the value down to where it was placed, to move it out again with
    /// [`Js::take_at`].
    pub fn parse_snapshot_kept(
        text: &str,
        kept: &mut dyn FnMut() -> Option<Js>,
    ) -> Result<(Js, Vec<Vec<usize>>), SyntaxError> {
        let mut parser = Parser::new(text, true);
        parser.kept = Some(kept);
        parser.skip_ws();
        let value = parser.value();
        parser.finish(value)
    }

    /// Moves out the value at `path` (child indices: an array's element, an object's member in
    /// order), leaving `undefined` in its place.
    pub fn take_at(&mut self, path: &[usize]) -> Option<Js> {
        let Some((&last, above)) = path.split_last() else {
            return Some(std::mem::replace(self, Js::Undefined));
        };
        let mut here = self;
        for &i in above {
            here = here.child_mut(i)?;
        }
        here.child_mut(last)
            .map(|slot| std::mem::replace(slot, Js::Undefined))
    }

    fn child_mut(&mut self, index: usize) -> Option<&mut Js> {
        match self {
            Js::Array(a) => a.items.get_mut(index)?.as_mut(),
            Js::Object(o) => o.members.get_mut(index).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string's text, when this is a well-formed string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Js::Str(JsStr { text, lone: None }) => Some(text),
            _ => None,
        }
    }

    /// The number, when this is one.
    pub fn as_num(&self) -> Option<f64> {
        match self {
            Js::Num(n) => Some(*n),
            _ => None,
        }
    }

    /// An own member of an object (the last, if a plain JSON text repeated it). Prototype
    /// members are never seen.
    pub fn get(&self, key: &str) -> Option<&Js> {
        match self {
            Js::Object(o) => o
                .members
                .iter()
                .rev()
                .find(|(k, _)| k.lone.is_none() && k.text == key)
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// `Object.hasOwn(value, key)` for an object (a hidden property is own).
    pub fn has_own(&self, key: &str) -> bool {
        matches!(self, Js::Object(o)
            if o.members.iter().any(|(k, _)| k.lone.is_none() && k.text == key))
    }

    /// `typeof value`.
    pub fn type_of(&self) -> &'static str {
        match self {
            Js::Undefined => "undefined",
            Js::Null | Js::Array(_) | Js::Object(_) | Js::Proxy | Js::Hidden => "object",
            Js::Bool(_) => "boolean",
            Js::Num(_) => "number",
            Js::Str(_) => "string",
            Js::BigInt(_) => "bigint",
            Js::Function => "function",
            Js::Symbol => "symbol",
        }
    }

    /// `Number.isSafeInteger(value) && !Object.is(value, -0)`, as an `i64`.
    pub fn safe_integer(&self) -> Option<i64> {
        match *self {
            Js::Num(n) if is_safe_integer(n) && !(n == 0.0 && n.is_sign_negative()) => {
                Some(n as i64)
            }
            _ => None,
        }
    }

    /// `String(value)`, as JavaScript prints it in a message (a symbol, which `String` would
    /// print with its description, is `Symbol()`; a proxy or a function is described, never
    /// called).
    pub fn js_string(&self) -> String {
        let mut out = String::new();
        self.write_js_string(&mut out, 0);
        out
    }

    fn write_js_string(&self, out: &mut String, depth: usize) {
        match self {
            Js::Undefined => out.push_str("undefined"),
            Js::Null => out.push_str("null"),
            Js::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Js::Num(n) => out.push_str(&number_to_string(*n)),
            Js::Str(s) => out.push_str(&s.text),
            Js::BigInt(digits) => out.push_str(digits),
            Js::Function => out.push_str("function"),
            Js::Symbol => out.push_str("Symbol()"),
            Js::Proxy | Js::Hidden | Js::Object(_) => out.push_str("[object Object]"),
            Js::Array(a) => {
                // Array.prototype.join: null and undefined print as empty; a cycle cannot occur
                // in a snapshot, but the depth stays bounded anyway.
                for (i, item) in a.items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    match item {
                        None | Some(Js::Null | Js::Undefined) => {}
                        Some(v) if depth < 64 => v.write_js_string(out, depth + 1),
                        Some(_) => {}
                    }
                }
            }
        }
    }

    /// Plain JSON of a value JSON can hold (`undefined` members and elements excluded as
    /// `JSON.stringify` excludes and nulls them), or `None` for anything else.
    pub fn to_json(&self) -> Option<String> {
        let mut out = String::new();
        self.write_json(&mut out).then_some(out)
    }

    fn write_json(&self, out: &mut String) -> bool {
        match self {
            Js::Null => out.push_str("null"),
            Js::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Js::Num(n) if n.is_finite() => out.push_str(&number_to_string(*n)),
            Js::Str(s) if s.lone.is_none() => write_json_string(out, &s.text),
            Js::Array(a) if !a.extra_keys => {
                out.push('[');
                for (i, item) in a.items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    match item {
                        Some(Js::Undefined) => out.push_str("null"),
                        Some(v) => {
                            if !v.write_json(out) {
                                return false;
                            }
                        }
                        None => return false,
                    }
                }
                out.push(']');
            }
            Js::Object(o) if o.proto != Proto::Other && !o.symbols => {
                out.push('{');
                let mut first = true;
                for (k, v) in &o.members {
                    if matches!(v, Js::Undefined) {
                        continue;
                    }
                    if k.lone.is_some() {
                        return false;
                    }
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    write_json_string(out, &k.text);
                    out.push(':');
                    if !v.write_json(out) {
                        return false;
                    }
                }
                out.push('}');
            }
            _ => return false,
        }
        true
    }
}

/// `Number.isSafeInteger`.
pub fn is_safe_integer(n: f64) -> bool {
    n.is_finite() && n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_991.0
}

/// `String(n)` for a number (JavaScript's Number::toString), exact for every integer and for
/// the shortest round-trip form of the rest.
pub fn number_to_string(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if n == 0.0 {
        return "0".into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits; lay them out as ECMAScript does.
    let sci = format!("{:e}", n.abs());
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().expect("a decimal exponent");
    let k = digits.len() as i32;
    let point = exp + 1; // the position of the decimal point relative to the digits
    let mut out = String::new();
    if n < 0.0 {
        out.push('-');
    }
    if k <= point && point <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (point - k) as usize));
    } else if 0 < point && point <= 21 {
        out.push_str(&digits[..point as usize]);
        out.push('.');
        out.push_str(&digits[point as usize..]);
    } else if -6 < point && point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-point) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = point - 1;
        let _ = write!(out, "e{}{}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    out
}

/// Appends `text` as `JSON.stringify` writes a string (the canonical encoder's escaping, which
/// is the same).
pub fn write_json_string(out: &mut String, text: &str) {
    crate::canonical::escape_into(text, out);
}

struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
    snapshot: bool,
    depth: usize,
    /// With [`Js::parse_snapshot_kept`]: where `r` takes its value from, the child indices down
    /// to the value being read, and where each `r` was placed.
    kept: Option<&'a mut dyn FnMut() -> Option<Js>>,
    path: Vec<usize>,
    slots: Vec<Vec<usize>>,
    /// The elements and members of the containers being read, innermost last: each container
    /// takes its own off the top when it closes, into a vector of exactly their number (no
    /// growth while reading, no spare room kept: a kept value's tree lives long).
    items: Vec<Option<Js>>,
    members: Vec<(JsStr, Js)>,
    /// Why the parse stopped: kept here, so that what the parser's functions return is only
    /// the value (measured: a result carrying the error beside a [`Js`] made every return a
    /// wider move, a tenth of a parse).
    error: Option<SyntaxError>,
}

/// The parse stopped; [`Parser::error`] says why.
struct Stop;

type Parsed<T> = Result<T, Stop>;

impl<'a> Parser<'a> {
    fn new(text: &'a str, snapshot: bool) -> Parser<'a> {
        Parser {
            bytes: text.as_bytes(),
            text,
            at: 0,
            snapshot,
            depth: 0,
            kept: None,
            path: Vec::new(),
            slots: Vec::new(),
            items: Vec::new(),
            members: Vec::new(),
            error: None,
        }
    }

    #[cold]
    fn fail<T>(&mut self, message: &'static str) -> Parsed<T> {
        self.error = Some(SyntaxError {
            offset: self.at,
            message,
        });
        Err(Stop)
    }

    /// Ends a parse: the value, or the error it stopped with.
    fn finish(mut self, value: Parsed<Js>) -> Result<(Js, Vec<Vec<usize>>), SyntaxError> {
        if value.is_ok() {
            self.skip_ws();
            if self.at != self.bytes.len() {
                let _ = self.fail::<()>("unexpected text after the value");
            }
        }
        match (value, self.error) {
            (Ok(value), None) => Ok((value, self.slots)),
            (_, Some(error)) => Err(error),
            (Err(Stop), None) => unreachable!("a parse stops only through fail"),
        }
    }

    fn document(mut self) -> Result<Js, SyntaxError> {
        self.skip_ws();
        let value = self.value();
        self.finish(value).map(|(value, _)| value)
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn literal(&mut self, word: &str, value: Js) -> Parsed<Js> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(value)
        } else {
            self.fail("unexpected character")
        }
    }

    fn marker(&mut self, value: Js) -> Parsed<Js> {
        if !self.snapshot {
            return self.fail("unexpected character");
        }
        self.at += 1;
        Ok(value)
    }

    fn value(&mut self) -> Parsed<Js> {
        match self.peek() {
            None => self.fail("unexpected end of text"),
            Some(b'n') => self.literal("null", Js::Null),
            Some(b't') => self.literal("true", Js::Bool(true)),
            Some(b'f') if self.text[self.at..].starts_with("false") => {
                self.literal("false", Js::Bool(false))
            }
            Some(b'"') => Ok(Js::Str(self.string()?)),
            Some(b'[') => self.array(),
            Some(b'{') => self.object(),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'u') => self.marker(Js::Undefined),
            Some(b'N') => self.marker(Js::Num(f64::NAN)),
            Some(b'I') => self.marker(Js::Num(f64::INFINITY)),
            Some(b'f') => self.marker(Js::Function),
            Some(b's') => self.marker(Js::Symbol),
            Some(b'p') => self.marker(Js::Proxy),
            Some(b'h') => self.marker(Js::Hidden),
            Some(b'r') if self.kept.is_some() => {
                let Some(value) = self.kept.as_mut().and_then(|next| next()) else {
                    return self.fail("no kept value for r");
                };
                self.at += 1;
                self.slots.push(self.path.clone());
                Ok(value)
            }
            Some(b'b') if self.snapshot => {
                self.at += 1;
                let digits = self.string()?;
                Ok(Js::BigInt(digits.text))
            }
            Some(_) => self.fail("unexpected character"),
        }
    }

    fn number(&mut self) -> Parsed<Js> {
        let start = self.at;
        if self.snapshot && self.text[self.at..].starts_with("-I") {
            self.at += 2;
            return Ok(Js::Num(f64::NEG_INFINITY));
        }
        self.eat(b'-');
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                while let Some(b'0'..=b'9') = self.peek() {
                    self.at += 1;
                }
            }
            _ => return self.fail("invalid number"),
        }
        if self.eat(b'.') {
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return self.fail("invalid number");
            }
            while let Some(b'0'..=b'9') = self.peek() {
                self.at += 1;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if !self.eat(b'+') {
                self.eat(b'-');
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return self.fail("invalid number");
            }
            while let Some(b'0'..=b'9') = self.peek() {
                self.at += 1;
            }
        }
        match self.text[start..self.at].parse::<f64>() {
            Ok(n) => Ok(Js::Num(n)),
            Err(_) => self.fail("invalid number"),
        }
    }

    fn hex4(&mut self) -> Parsed<u16> {
        let Some(digits) = self.text.get(self.at..self.at + 4) else {
            return self.fail("invalid \\u escape");
        };
        let Ok(unit) = u16::from_str_radix(digits, 16) else {
            return self.fail("invalid \\u escape");
        };
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return self.fail("invalid \\u escape");
        }
        self.at += 4;
        Ok(unit)
    }

    fn string(&mut self) -> Parsed<JsStr> {
        if !self.eat(b'"') {
            return self.fail("expected a string");
        }
        // The common string has no escape: one scan, one allocation of the exact size.
        let len = plain_prefix(&self.bytes[self.at..]);
        if self.bytes.get(self.at + len) == Some(&b'"') {
            let text = self.text[self.at..self.at + len].to_string();
            self.at += len + 1;
            return Ok(JsStr { text, lone: None });
        }
        let mut text = String::new();
        let mut lone = None;
        loop {
            let run = self.at;
            self.at += plain_prefix(&self.bytes[run..]);
            text.push_str(&self.text[run..self.at]);
            match self.peek() {
                None => return self.fail("unterminated string"),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(JsStr { text, lone });
                }
                Some(b'\\') => {
                    self.at += 1;
                    let Some(escape) = self.peek() else {
                        return self.fail("unterminated string");
                    };
                    self.at += 1;
                    let c = match escape {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let unit = self.hex4()?;
                            match unit {
                                0xD800..=0xDBFF => {
                                    let save = self.at;
                                    if self.text[self.at..].starts_with("\\u") {
                                        self.at += 2;
                                        let low = self.hex4()?;
                                        if (0xDC00..=0xDFFF).contains(&low) {
                                            let code = 0x10000
                                                + ((u32::from(unit) - 0xD800) << 10)
                                                + (u32::from(low) - 0xDC00);
                                            char::from_u32(code).unwrap_or('\u{FFFD}')
                                        } else {
                                            self.at = save;
                                            lone.get_or_insert(Lone::High);
                                            '\u{FFFD}'
                                        }
                                    } else {
                                        lone.get_or_insert(Lone::High);
                                        '\u{FFFD}'
                                    }
                                }
                                0xDC00..=0xDFFF => {
                                    lone.get_or_insert(Lone::Low);
                                    '\u{FFFD}'
                                }
                                unit => char::from_u32(u32::from(unit)).unwrap_or('\u{FFFD}'),
                            }
                        }
                        _ => return self.fail("invalid escape"),
                    };
                    text.push(c);
                }
                Some(_) => return self.fail("control character in a string"),
            }
        }
    }

    fn enter(&mut self) -> Parsed<()> {
        self.depth += 1;
        if self.depth > MAX_PARSE_DEPTH {
            return self.fail("nesting too deep");
        }
        Ok(())
    }

    fn array(&mut self) -> Parsed<Js> {
        self.at += 1;
        self.enter()?;
        let extra_keys = self.snapshot && self.eat(b'!');
        let base = self.items.len();
        self.skip_ws();
        if !self.eat(b']') {
            loop {
                self.skip_ws();
                if self.snapshot && self.eat(b'_') {
                    self.items.push(None);
                } else if self.kept.is_none() {
                    let value = self.value()?;
                    self.items.push(Some(value));
                } else {
                    self.path.push(self.items.len() - base);
                    let value = self.value()?;
                    self.items.push(Some(value));
                    self.path.pop();
                }
                self.skip_ws();
                if self.eat(b',') {
                    continue;
                }
                if self.eat(b']') {
                    break;
                }
                return self.fail("expected ',' or ']'");
            }
        }
        self.depth -= 1;
        let items = self.items.drain(base..).collect();
        Ok(Js::Array(JsArray { items, extra_keys }))
    }

    fn object(&mut self) -> Parsed<Js> {
        self.at += 1;
        self.enter()?;
        let mut proto = Proto::Plain;
        let mut symbols = false;
        if self.snapshot {
            loop {
                if self.eat(b'#') {
                    proto = Proto::Null;
                } else if self.eat(b'@') {
                    proto = Proto::Other;
                } else if self.eat(b'!') {
                    symbols = true;
                } else {
                    break;
                }
            }
        }
        let base = self.members.len();
        self.skip_ws();
        if !self.eat(b'}') {
            loop {
                self.skip_ws();
                let key = self.string()?;
                self.skip_ws();
                if !self.eat(b':') {
                    return self.fail("expected ':'");
                }
                self.skip_ws();
                let value = if self.kept.is_none() {
                    self.value()?
                } else {
                    self.path.push(self.members.len() - base);
                    let value = self.value()?;
                    self.path.pop();
                    value
                };
                if !self.snapshot
                    && let Some(slot) = self.members[base..].iter_mut().find(|(k, _)| *k == key)
                {
                    // JSON.parse: a repeated key keeps its first position and its last value.
                    slot.1 = value;
                } else {
                    self.members.push((key, value));
                }
                self.skip_ws();
                if self.eat(b',') {
                    continue;
                }
                if self.eat(b'}') {
                    break;
                }
                return self.fail("expected ',' or '}'");
            }
        }
        self.depth -= 1;
        let mut members: Vec<(JsStr, Js)> = self.members.drain(base..).collect();
        if !self.snapshot {
            order_like_javascript(&mut members);
        }
        Ok(Js::Object(JsObject {
            proto,
            members,
            symbols,
        }))
    }
}

/// JavaScript enumerates an object's array-index keys first, in numeric order, then the rest in
/// insertion order; `JSON.parse` builds objects that way.
fn order_like_javascript(members: &mut [(JsStr, Js)]) {
    if members.iter().any(|(k, _)| array_index(&k.text).is_some()) {
        members.sort_by_key(|(k, _)| array_index(&k.text).map_or((1, 0), |i| (0, i)));
    }
}

/// The array index a key denotes (`"0"`..`"4294967294"`, canonical decimal).
pub fn array_index(key: &str) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u64>()
        .ok()
        .filter(|&n| n < 4_294_967_295)
        .map(|n| n as u32)
}

#[cfg(test)]
mod tests;
