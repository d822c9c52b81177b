//! The strict JSON parser behind [`parse`] and the streaming canonicalizer.

use std::borrow::Cow;

use super::encode::{Fault, Seg, check_depth, plain_prefix};
use super::*;

pub(super) struct Parser<'a> {
    pub(super) text: &'a str,
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn syntax(&self, message: &str) -> Fault {
        let mut fault = Fault::new(ErrorCode::InvalidJson, format!("invalid JSON: {message}"));
        fault.offset = Some(self.pos);
        fault
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    pub(super) fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    pub(super) fn expect(&mut self, byte: u8, what: &str) -> Result<(), Fault> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.syntax(what))
        }
    }

    pub(super) fn value(&mut self, depth: usize) -> Result<Value<'a>, Fault> {
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

    pub(super) fn literal(&mut self, word: &str, value: Value<'a>) -> Result<Value<'a>, Fault> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.syntax("expected a value"))
        }
    }

    pub(super) fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    pub(super) fn number(&mut self) -> Result<Value<'a>, Fault> {
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

    pub(super) fn hex4(&mut self) -> Result<u32, Fault> {
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

    pub(super) fn string(&mut self) -> Result<Cow<'a, str>, Fault> {
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

    pub(super) fn array(&mut self, depth: usize) -> Result<Value<'a>, Fault> {
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

    pub(super) fn object(&mut self, depth: usize) -> Result<Value<'a>, Fault> {
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
