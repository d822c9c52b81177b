//! Encoding a [`Value`] as canonical JSON, and the faults (code, message, path) both
//! canonicalizers report.

use std::borrow::Cow;

use super::*;

/// Where a fault happened: built while unwinding, so the success path pays nothing for it.
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

pub(super) struct Fault {
    pub(super) code: ErrorCode,
    pub(super) message: String,
    pub(super) offset: Option<usize>,
    pub(super) path: Vec<Seg>,
}

impl Fault {
    pub(super) fn new(code: ErrorCode, message: impl Into<String>) -> Fault {
        Fault {
            code,
            message: message.into(),
            offset: None,
            path: Vec::new(),
        }
    }

    pub(super) fn at(mut self, seg: Seg) -> Fault {
        self.path.push(seg);
        self
    }

    pub(super) fn into_error(self) -> Error {
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

pub(super) fn check_depth(depth: usize) -> Result<(), Fault> {
    if depth > MAX_DEPTH {
        Err(Fault::new(
            ErrorCode::NestingTooDeep,
            format!("nesting deeper than {MAX_DEPTH} levels"),
        ))
    } else {
        Ok(())
    }
}

pub(super) fn encode(value: &Value<'_>, out: &mut String, depth: usize) -> Result<(), Fault> {
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

pub(crate) fn escape_into(s: &str, out: &mut String) {
    out.push('"');
    let bytes = s.as_bytes();
    // Most strings need no escape: copy them whole after a word-at-a-time scan.
    let plain = plain_prefix(bytes);
    if plain == bytes.len() {
        out.push_str(s);
        out.push('"');
        return;
    }
    out.push_str(&s[..plain]);
    let mut start = plain;
    for (i, &b) in bytes.iter().enumerate().skip(plain) {
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
pub(crate) fn plain_prefix(bytes: &[u8]) -> usize {
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
pub(super) fn write_string(s: &Cow<'_, str>, out: &mut String) {
    match s {
        Cow::Borrowed(raw) => {
            out.push('"');
            out.push_str(raw);
            out.push('"');
        }
        Cow::Owned(decoded) => escape_into(decoded, out),
    }
}
