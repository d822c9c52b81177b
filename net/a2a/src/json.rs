//! JSON helpers of the service: the nesting limit checked before parsing, a stable digest of a
//! value (idempotent sends compare digests), and ISO 8601 timestamps.

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

fn digits(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// An ISO 8601 / RFC 3339 timestamp (`2026-01-02T03:04:05Z`, with an optional fraction of up to
/// nine digits and `Z` or a `±HH:MM` offset) as milliseconds since the epoch (the fraction is
/// truncated to milliseconds); `None` for anything else.
pub fn parse_iso(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let year = digits(text.get(0..4)?)?;
    let month = digits(text.get(5..7)?)?;
    let day = digits(text.get(8..10)?)?;
    let hour = digits(text.get(11..13)?)?;
    let minute = digits(text.get(14..16)?)?;
    let second = digits(text.get(17..19)?)?;
    let mut rest = text.get(19..)?;
    let mut milli = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let end = fraction
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(fraction.len());
        if end == 0 || end > 9 {
            return None;
        }
        let padded = format!("{:0<3}", &fraction[..end.min(3)]);
        milli = digits(&padded)?;
        rest = &fraction[end..];
    }
    let offset_minutes = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let zone = rest.get(1..)?;
            if zone.len() != 5 || zone.as_bytes()[2] != b':' {
                return None;
            }
            let (zh, zm) = (digits(&zone[0..2])?, digits(&zone[3..5])?);
            if zh > 23 || zm > 59 {
                return None;
            }
            sign * (zh * 60 + zm)
        }
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&month)
        || day < 1
        || day > month_days[(month - 1) as usize]
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let days = agent_intercom_core::time::days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1000 + milli)
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
        for ms in [0, 1_700_000_000_123, 951_782_400_000, 4_102_444_799_999] {
            assert_eq!(parse_iso(&iso_ms(ms)), Some(ms));
        }
        assert_eq!(parse_iso("2023-11-14T22:13:20Z"), Some(1_700_000_000_000));
        assert_eq!(
            parse_iso("2023-11-15T00:13:20.5+02:00"),
            Some(1_700_000_000_500)
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
        ] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
    }
}
