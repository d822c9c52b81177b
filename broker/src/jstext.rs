//! Frames as JavaScript writes them. `JSON.stringify` emits a lone UTF-16 surrogate (half of a
//! sliced emoji, say) as an escape such as `"a\ud800b"`, `JSON.parse` accepts it, and the
//! TypeScript broker forwards it. A Rust `String` cannot hold a lone surrogate, so the broker
//! carries one inside its strings as two noncharacters' worth of text and writes the escape back
//! out, byte for byte as `JSON.stringify` writes it, in every frame it sends:
//!
//! - a lone surrogate `U+D800 + k` (k < 2048) is held as [`MARK`] followed by `U+E000 + k`;
//! - a [`MARK`] the client really sent is held as [`MARK`] twice, whenever the frame also needs
//!   the first rule or holds a [`MARK`] at all, so the held form is never ambiguous.
//!
//! [`MARK`] is U+FDD0, a noncharacter Unicode reserves for exactly this kind of internal use.
//! Frames without either (all but a few) are parsed and written untouched.

use std::borrow::Cow;

use serde_json::Value;

/// The noncharacter that introduces a held lone surrogate (or a held literal U+FDD0).
pub const MARK: char = '\u{FDD0}';
const MARK_UTF8: [u8; 3] = [0xEF, 0xB7, 0x90];
const BASE: u32 = 0xE000;

fn hex(b: u8) -> Option<u32> {
    (b as char).to_digit(16)
}

fn escape_at(bytes: &[u8], i: usize) -> Option<u32> {
    // `\uXXXX` at i.
    if bytes.get(i) != Some(&b'\\') || bytes.get(i + 1) != Some(&b'u') {
        return None;
    }
    let digits = bytes.get(i + 2..i + 6)?;
    digits
        .iter()
        .try_fold(0u32, |acc, &b| Some(acc * 16 + hex(b)?))
}

/// True when a payload may hold a lone-surrogate escape or a MARK (raw or escaped): only then
/// does it need [`hold`]. Conservative, in one pass: any `\uD...` or `\uF...` escape, or any
/// 0xEF byte (the lead byte of U+FDD0).
fn needs_holding(payload: &[u8]) -> bool {
    payload.iter().enumerate().any(|(i, &b)| {
        b == 0xEF
            || (b == b'\\'
                && payload.get(i + 1) == Some(&b'u')
                && payload
                    .get(i + 2)
                    .is_some_and(|d| matches!(d, b'd' | b'D' | b'f' | b'F')))
    })
}

fn push_held(out: &mut Vec<u8>, c: char) {
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

/// Rewrites the strings of a JSON text into the held form (see the module docs). Bytes outside
/// strings, and everything that is not a lone-surrogate escape or a MARK, are copied unchanged,
/// so malformed input stays malformed for the parser to report.
fn hold(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 16);
    let mut in_string = false;
    let mut i = 0;
    while i < payload.len() {
        let b = payload[i];
        if !in_string {
            in_string = b == b'"';
            out.push(b);
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                out.push(b);
                i += 1;
            }
            b'\\' => match escape_at(payload, i) {
                Some(0xD800..=0xDBFF)
                    if escape_at(payload, i + 6)
                        .is_some_and(|low| (0xDC00..=0xDFFF).contains(&low)) =>
                {
                    // A proper pair: as it came.
                    out.extend_from_slice(&payload[i..i + 12]);
                    i += 12;
                }
                Some(unit @ 0xD800..=0xDFFF) => {
                    push_held(&mut out, MARK);
                    push_held(
                        &mut out,
                        char::from_u32(BASE + (unit - 0xD800)).expect("private use"),
                    );
                    i += 6;
                }
                Some(0xFDD0) => {
                    push_held(&mut out, MARK);
                    push_held(&mut out, MARK);
                    i += 6;
                }
                _ => {
                    // Any other escape, two bytes at a time (so `\\` and `\"` are never misread).
                    out.extend_from_slice(&payload[i..(i + 2).min(payload.len())]);
                    i += 2;
                }
            },
            _ if payload[i..].starts_with(&MARK_UTF8) => {
                push_held(&mut out, MARK);
                push_held(&mut out, MARK);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// Parses a client frame as `JSON.parse` would, lone surrogates included (held, see the module
/// docs). Anything else `serde_json` refuses is refused the same way.
pub fn parse_frame(payload: &[u8]) -> Result<Value, serde_json::Error> {
    if needs_holding(payload) {
        serde_json::from_slice(&hold(payload))
    } else {
        serde_json::from_slice(payload)
    }
}

/// True when serialized text may hold a held value (it contains a [`MARK`]), so it must go
/// through [`release`].
pub fn holds_mark(text: &[u8]) -> bool {
    // The lead byte first (a vectorised search), the whole sequence only where it occurs.
    text.contains(&MARK_UTF8[0]) && text.windows(MARK_UTF8.len()).any(|w| w == MARK_UTF8)
}

/// Writes held text back out as JSON text: a held lone surrogate becomes its escape (lowercase
/// hex, as `JSON.stringify` writes it), a held MARK becomes U+FDD0. Text without a MARK is
/// returned as it is. Only for JSON text produced from held values: a MARK occurs only inside
/// strings there.
pub fn release(text: &str) -> Cow<'_, str> {
    if !holds_mark(text.as_bytes()) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != MARK {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(MARK) => out.push(MARK),
            Some(held) if (BASE..BASE + 0x800).contains(&(held as u32)) => {
                let unit = 0xD800 + (held as u32 - BASE);
                out.push_str(&format!("\\u{unit:04x}"));
            }
            Some(other) => {
                out.push(MARK);
                out.push(other);
            }
            None => out.push(MARK),
        }
    }
    Cow::Owned(out)
}

/// JavaScript's `string.length` of a held string: UTF-16 code units, a held lone surrogate or
/// held MARK counting as the one unit it is in JavaScript.
pub fn js_len(s: &str) -> usize {
    let units: usize = s.chars().map(char::len_utf16).sum();
    // Each held pair (two one-unit chars) stands for one unit.
    units - held_pairs(s)
}

/// UTF-8 bytes of a held string as JavaScript's `Buffer.byteLength` counts them (a lone
/// surrogate is 3 bytes, like the replacement character it becomes there).
pub fn utf8_len(s: &str) -> usize {
    s.len() - 3 * held_pairs(s)
}

fn held_pairs(s: &str) -> usize {
    if !s.contains(MARK) {
        return 0;
    }
    let mut pairs = 0;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == MARK && chars.next().is_some() {
            pairs += 1;
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        let value = parse_frame(text.as_bytes()).expect("parses");
        release(&serde_json::to_string(&value).unwrap()).into_owned()
    }

    #[test]
    fn lone_surrogates_survive_as_javascript_writes_them() {
        assert_eq!(round_trip(r#"{"t":"a\ud800b"}"#), r#"{"t":"a\ud800b"}"#);
        assert_eq!(round_trip(r#"{"t":"\uDFFF"}"#), r#"{"t":"\udfff"}"#);
        assert_eq!(
            round_trip(r#"{"t":"x\udc00\ud83d"}"#),
            r#"{"t":"x\udc00\ud83d"}"#
        );
        // A proper pair is a character, written raw as serde_json writes every character.
        assert_eq!(
            round_trip(r#"{"t":"\ud83d\ude00"}"#),
            "{\"t\":\"\u{1F600}\"}"
        );
        // A lone surrogate in a key too.
        assert_eq!(round_trip(r#"{"\ud800":1}"#), r#"{"\ud800":1}"#);
    }

    #[test]
    fn a_real_mark_is_never_mistaken_for_a_held_surrogate() {
        let text = "{\"t\":\"\u{FDD0}\u{E001}\",\"u\":\"\\ufdd0\",\"v\":\"\\ud800\"}";
        assert_eq!(
            round_trip(text),
            "{\"t\":\"\u{FDD0}\u{E001}\",\"u\":\"\u{FDD0}\",\"v\":\"\\ud800\"}"
        );
        // Without any lone surrogate, a MARK alone still round-trips.
        assert_eq!(round_trip("{\"t\":\"\u{FDD0}\"}"), "{\"t\":\"\u{FDD0}\"}");
    }

    #[test]
    fn escaped_backslashes_are_not_escapes() {
        assert_eq!(round_trip(r#"{"t":"\\ud800"}"#), r#"{"t":"\\ud800"}"#);
        assert_eq!(round_trip(r#"{"t":"\"\ud800"}"#), r#"{"t":"\"\ud800"}"#);
    }

    #[test]
    fn lengths_count_as_javascript_does() {
        let v = parse_frame(br#"{"t":"a\ud800b","m":"\ufdd0"}"#).unwrap();
        assert_eq!(js_len(v["t"].as_str().unwrap()), 3);
        assert_eq!(utf8_len(v["t"].as_str().unwrap()), 5);
        assert_eq!(js_len(v["m"].as_str().unwrap()), 1);
        assert_eq!(js_len("plain"), 5);
    }

    #[test]
    fn malformed_text_stays_malformed() {
        for bad in [
            &b"{\"t\":\"\\ud800"[..],
            b"{\"t\":\"\\u12\"}",
            b"{\"t\":\"\xff\"}",
            b"{\"t\":\"\xef\"}",
        ] {
            assert!(
                parse_frame(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
