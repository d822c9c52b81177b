//! JSON helpers of the service: the nesting limit checked before parsing, parsing that tells
//! text that is not JSON from valid JSON holding a value that cannot be read (a number out of
//! range), a stable digest of a value (idempotent sends compare digests), and ISO 8601
//! timestamps.

use serde_json::Value;

/// Domain of the digest of an A2A message ([`digest`]).
const DIGEST_DOMAIN: &str = "agent-intercom-a2a-message-v1";

/// The depth of the deepest array or object in `bytes` (the top-level value is depth 1), if it
/// exceeds `max`: scanned before parsing, so a deeply nested body is refused without recursion.
/// Nothing else is checked here (invalid JSON is the parser's to refuse).
pub fn too_deep(bytes: &[u8], max: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Some(depth);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// A body read as JSON.
#[derive(Debug)]
pub enum Parsed {
    /// Valid JSON, read whole.
    Whole(Value),
    /// Valid JSON (RFC 8259) holding a value that cannot be read: a number beyond the range of a
    /// 64-bit float (`1e400`, 400 digits), or a string with an unpaired surrogate escape.
    Unreadable(Unreadable),
    /// Not JSON, or not UTF-8: why.
    Invalid(String),
}

/// Where valid JSON holds a value that cannot be read, and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    /// The steps from the top to the value (to its object, for a key).
    pub path: Vec<Step>,
    /// What it is, for people.
    pub what: &'static str,
}

/// One step of a path into a JSON value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// An object's member.
    Key(String),
    /// An array's element.
    Index(usize),
}

const NUMBER_OUT_OF_RANGE: &str = "a number out of range (beyond about 1.8e308, the largest a \
    64-bit float holds)";
const UNPAIRED_SURROGATE: &str = "a string with an unpaired surrogate escape (not Unicode)";
const KEY_UNPAIRED_SURROGATE: &str =
    "an object with a key holding an unpaired surrogate escape (not Unicode)";

impl Unreadable {
    /// The path written as members are named in errors (`params.message.parts[0].text`), from
    /// step `from`; empty for the top.
    pub fn field(&self, from: usize) -> String {
        let mut out = String::new();
        for step in self.path.iter().skip(from) {
            match step {
                Step::Key(key) if out.is_empty() => out.push_str(key),
                Step::Key(key) => {
                    out.push('.');
                    out.push_str(key);
                }
                Step::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    /// The top-level member it is in, if the top is an object.
    pub fn member(&self) -> Option<&str> {
        match self.path.first() {
            Some(Step::Key(key)) => Some(key),
            _ => None,
        }
    }
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.field(0).as_str() {
            "" => write!(f, "the request is {}", self.what),
            field => write!(f, "{field} is {}", self.what),
        }
    }
}

/// Reads `bytes` as JSON, telling text that is not JSON from valid JSON that holds a value that
/// cannot be read. Call after [`too_deep`].
pub fn parse(bytes: &[u8]) -> Parsed {
    let error = match serde_json::from_slice::<Value>(bytes) {
        Ok(value) => return Parsed::Whole(value),
        Err(error) => error,
    };
    // The syntax alone: skipping values checks it without reading numbers or decoding strings.
    let text = match std::str::from_utf8(bytes) {
        Ok(text) if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() => text,
        _ => return Parsed::Invalid(error.to_string()),
    };
    match unreadable(text) {
        Some(found) => Parsed::Unreadable(found),
        // Valid, yet not read, for a reason not found here: refused as the parser says.
        None => Parsed::Invalid(error.to_string()),
    }
}

/// What a container being scanned is at.
enum Frame {
    /// An object: its current member's key, and whether a key comes next.
    Object(Option<String>, bool),
    /// An array: its current element.
    Array(usize),
}

fn path_of(stack: &[Frame]) -> Vec<Step> {
    stack
        .iter()
        .filter_map(|frame| match frame {
            Frame::Object(key, _) => key.clone().map(Step::Key),
            Frame::Array(i) => Some(Step::Index(*i)),
        })
        .collect()
}

/// The first value of the valid JSON `text` that `serde_json` cannot read, with its path.
fn unreadable(text: &str) -> Option<Unreadable> {
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'{' => stack.push(Frame::Object(None, true)),
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object(_, key_next)) => *key_next = true,
                Some(Frame::Array(i)) => *i += 1,
                None => {}
            },
            b'"' => {
                let end = string_end(bytes, at);
                let token = &text[at..end];
                let read = serde_json::from_str::<String>(token);
                if let Some(Frame::Object(key, key_next @ true)) = stack.last_mut() {
                    match read {
                        Ok(name) => {
                            *key = Some(name);
                            *key_next = false;
                        }
                        Err(_) => {
                            let parent = stack.len() - 1;
                            return Some(Unreadable {
                                path: path_of(&stack[..parent]),
                                what: KEY_UNPAIRED_SURROGATE,
                            });
                        }
                    }
                } else if read.is_err() {
                    return Some(Unreadable {
                        path: path_of(&stack),
                        what: UNPAIRED_SURROGATE,
                    });
                }
                at = end;
                continue;
            }
            b'-' | b'0'..=b'9' => {
                let end = bytes[at..]
                    .iter()
                    .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .map_or(bytes.len(), |n| at + n);
                if serde_json::from_str::<Value>(&text[at..end]).is_err() {
                    return Some(Unreadable {
                        path: path_of(&stack),
                        what: NUMBER_OUT_OF_RANGE,
                    });
                }
                at = end;
                continue;
            }
            // Whitespace, colons, and the letters of true, false and null.
            _ => {}
        }
        at += 1;
    }
    None
}

/// Where the string starting at `start` (its opening quote) ends: after its closing quote.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut at = start + 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// The top-level object of the JSON text `bytes` without its member `left_out`, which is not
/// read; `None` when the top is not an object or another member cannot be read either.
pub fn object_without(bytes: &[u8], left_out: &str) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let object = serde::de::DeserializeSeed::deserialize(Without(left_out), &mut de).ok()?;
    de.end().ok()?;
    Some(object)
}

/// Reads an object, skipping one member unread.
struct Without<'a>(&'a str);

impl<'de> serde::de::DeserializeSeed<'de> for Without<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Without<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == self.0 {
                map.next_value::<serde::de::IgnoredAny>()?;
            } else {
                object.insert(key, map.next_value::<Value>()?);
            }
        }
        Ok(Value::Object(object))
    }
}

/// The first object key that appears twice in one object of the JSON text `bytes`, if any
/// (`None` too for text that is not JSON: the parser refuses that). `serde_json` keeps the last
/// of repeated keys; a reader that keeps the first would see another request, so a request with
/// a repeated key is refused rather than read either way. Call after [`too_deep`] (recursion is
/// bounded by it).
pub fn repeated_key(bytes: &[u8]) -> Option<String> {
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let _ = serde::de::DeserializeSeed::deserialize(Repeats(&mut found), &mut de);
    found
}

/// Walks a JSON value without building it, recording the first repeated key of an object.
struct Repeats<'a>(&'a mut Option<String>);

impl<'de> serde::de::DeserializeSeed<'de> for Repeats<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Repeats<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Repeats(&mut *self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if self.0.is_none() && seen.contains(&key) {
                *self.0 = Some(key);
            } else {
                seen.insert(key);
            }
            map.next_value_seed(Repeats(&mut *self.0))?;
        }
        Ok(())
    }
}

/// `value` serialised with object keys sorted (by their UTF-8 bytes) at every depth, no
/// whitespace: the same value always gives the same text, whatever the order it was sent in.
pub fn stable_text(value: &Value) -> String {
    let mut out = String::new();
    write_stable(value, &mut out);
    out
}

fn write_stable(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_stable(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_stable(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// The hex SHA-256 digest of `value`'s [`stable_text`], in its own domain.
pub fn digest(value: &Value) -> String {
    // The domain is a constant of printable ASCII, which is all `hash_of_payload` checks.
    agent_intercom_core::canonical::hash_of_payload(DIGEST_DOMAIN, &stable_text(value))
        .unwrap_or_default()
}

/// Milliseconds since the epoch as ISO 8601 in UTC with milliseconds,
/// `YYYY-MM-DDTHH:MM:SS.mmmZ` (times before the epoch read as the epoch).
pub fn iso_ms(ms: i64) -> String {
    agent_intercom_core::time::format_ms(ms.max(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nesting_is_measured_outside_strings() {
        assert_eq!(too_deep(b"[[[]]]", 3), None);
        assert_eq!(too_deep(b"[[[[]]]]", 3), Some(4));
        assert_eq!(too_deep(br#"{"a":"[[[[[[\"[["}"#, 1), None);
        assert_eq!(too_deep(br#"["\\",[[]]]"#, 2), Some(3));
    }

    #[test]
    fn repeated_keys_are_found_at_any_depth_and_escapes_are_decoded() {
        assert_eq!(repeated_key(br#"{"a":1,"b":2}"#), None);
        assert_eq!(
            repeated_key(br#"{"method":"x","method":"y"}"#).as_deref(),
            Some("method")
        );
        assert_eq!(
            repeated_key(br#"{"p":[{"k":1,"k":2}]}"#).as_deref(),
            Some("k")
        );
        // "\u0061" is "a": the same key, spelled otherwise.
        assert_eq!(repeated_key(br#"{"a":1,"\u0061":2}"#).as_deref(), Some("a"));
        // The same key in two objects is not a repeat; nor is a key equal to a value.
        assert_eq!(repeated_key(br#"[{"a":1},{"a":2,"b":"a"}]"#), None);
        assert_eq!(repeated_key(b"{not json"), None);
    }

    fn unreadable_at(text: &str) -> (String, &'static str) {
        match parse(text.as_bytes()) {
            Parsed::Unreadable(found) => (found.field(0), found.what),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn valid_json_with_a_value_out_of_range_is_told_from_invalid_json() {
        let big = "9".repeat(400);
        for (text, field, what) in [
            (r#"{"id":1e400}"#.to_string(), "id", NUMBER_OUT_OF_RANGE),
            (
                r#"{"a":[0,{"b":-1E+400}]}"#.into(),
                "a[1].b",
                NUMBER_OUT_OF_RANGE,
            ),
            (
                format!(r#"{{"a":"x,[{{\"","b":[1,2,{big}]}}"#),
                "b[2]",
                NUMBER_OUT_OF_RANGE,
            ),
            ("1e400".into(), "", NUMBER_OUT_OF_RANGE),
            (r#"[1,"\ud800"]"#.into(), "[1]", UNPAIRED_SURROGATE),
            (r#"{"p":{"\udc00":1}}"#.into(), "p", KEY_UNPAIRED_SURROGATE),
            (
                r#"{"\"":{"k\\":[true,null,{"x":2e999}]}}"#.into(),
                "\".k\\[2].x",
                NUMBER_OUT_OF_RANGE,
            ),
        ] {
            assert_eq!(unreadable_at(&text), (field.to_string(), what), "{text}");
        }
        // Numbers that are read: tiny ones round to zero, huge exponents of zero are zero.
        for text in [
            "1e-400",
            "0e99999999999999999999",
            "1e308",
            "18446744073709551616",
        ] {
            assert!(matches!(parse(text.as_bytes()), Parsed::Whole(_)), "{text}");
        }
        for text in [
            "{",
            "",
            "{\"a\":1e}",
            "{\"a\":01}",
            "[1,]",
            "\"\\x\"",
            "{\"a\":1e400",
            "1e400 x",
        ] {
            assert!(
                matches!(parse(text.as_bytes()), Parsed::Invalid(_)),
                "{text}"
            );
        }
        assert!(matches!(parse(b"[\"\xff\"]"), Parsed::Invalid(_)));
    }

    #[test]
    fn an_object_is_read_without_one_member() {
        let text = br#"{"id":1e400,"method":"m","params":{"x":[1]}}"#;
        assert_eq!(
            object_without(text, "id"),
            Some(json!({"method": "m", "params": {"x": [1]}}))
        );
        assert_eq!(object_without(text, "method"), None);
        assert_eq!(object_without(b"[1e400]", "id"), None);
        assert_eq!(object_without(br#"{"id":1e400} x"#, "id"), None);
    }

    #[test]
    fn the_stable_text_ignores_key_order() {
        let a = json!({"b": [1, {"y": true, "x": null}], "a": "é\""});
        let b = json!({"a": "é\"", "b": [1, {"x": null, "y": true}]});
        assert_eq!(stable_text(&a), stable_text(&b));
        assert_eq!(
            stable_text(&a),
            r#"{"a":"é\"","b":[1,{"x":null,"y":true}]}"#
        );
        assert_eq!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&json!({"a": 1})));
        assert_eq!(digest(&a).len(), 64);
    }

    #[test]
    fn timestamps_round_trip() {
        assert_eq!(iso_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_ms(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(iso_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
        // `statusTimestampAfter` is read by the core's one RFC 3339 reader.
        let parse_iso = agent_intercom_core::time::parse_offset_time;
        for ms in [0, 1_700_000_000_123, 951_782_400_000, 4_102_444_799_999] {
            assert_eq!(parse_iso(&iso_ms(ms)), Some(ms));
        }
        assert_eq!(parse_iso("2023-11-14T22:13:20Z"), Some(1_700_000_000_000));
        assert_eq!(
            parse_iso("2023-11-15T00:13:20.5+02:00"),
            Some(1_700_000_000_500)
        );
        assert_eq!(
            parse_iso("2023-11-14T22:13:20.123456789Z"),
            Some(1_700_000_000_123)
        );
        for bad in [
            "",
            "2023-11-14",
            "2023-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2023-11-14T22:13:20",
            "2023-11-14T22:13:20.Z",
            "2023-11-14T22:13:20+0200",
            "2023-11-14T22:13:20.1234567890Z",
            "２０２３-11-14T22:13:20Z",
            // A leap second is refused (it read as the next minute's first second before the
            // one reader).
            "2016-12-31T23:59:60Z",
        ] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
    }
}
