//! The contract's readers: the checks every record parser is built from, with the paths and
//! messages the TypeScript contract gives (`<path>: <message>`, thrown there as
//! `ContractValidationError`).
//!
//! Paths are built as the TypeScript contract builds them: `$` for the value, `.key` for a
//! member and `[i]` for an element, whatever the key holds.

use super::Failure;
use super::value::{Js, JsArray, JsStr, Lone, Proto};

/// A reader's result.
pub type Read<T> = Result<T, Failure>;

/// `<path>: <message>` as a contract failure.
pub fn fail<T>(path: &str, message: impl Into<String>) -> Read<T> {
    Err(Failure::contract(path, message))
}

/// `path.key`.
pub fn member(path: &str, key: &str) -> String {
    format!("{path}.{key}")
}

/// `read` of member `key` of `v`, at `path.key`: the path is formatted only if the read fails
/// (see [`lazily`]).
pub fn read_at<'v, T>(
    v: &'v Js,
    path: &str,
    key: &str,
    read: impl Fn(&'v Js, &str) -> Read<T>,
) -> Read<T> {
    lazily(|| member(path, key), |p| read(field(v, key), p))
}

/// `read(path)` with the path built only when the read fails: readers are pure, so reading again
/// with the real path gives the very failure the caller must see, and the common case formats
/// no path at all.
pub fn lazily<T>(path: impl FnOnce() -> String, read: impl Fn(&str) -> Read<T>) -> Read<T> {
    match read("") {
        Ok(value) => Ok(value),
        Err(_) => read(&path()),
    }
}

/// `path[i]`.
pub fn element(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

/// The first unpaired surrogate of a string as the contract reports it.
pub fn well_formed(s: &JsStr, path: &str) -> Read<()> {
    match s.lone {
        None => Ok(()),
        Some(Lone::High) => fail(path, "string contains an unpaired high surrogate"),
        Some(Lone::Low) => fail(path, "string contains an unpaired low surrogate"),
    }
}

/// The own keys of an object after checking that each is an enumerable data property and that
/// none is a symbol (in JavaScript's key order: strings, then symbols).
pub fn own_data_keys<'v>(value: &'v Js, path: &str) -> Read<Vec<&'v JsStr>> {
    data_members(value, path)?;
    Ok(match value {
        Js::Object(object) => object.members.iter().map(|(key, _)| key).collect(),
        _ => Vec::new(),
    })
}

/// The checks of [`own_data_keys`] without the list (nothing allocated when they pass).
pub fn data_members(value: &Js, path: &str) -> Read<()> {
    let Js::Object(object) = value else {
        return Ok(());
    };
    if let Some((key, _)) = object
        .members
        .iter()
        .find(|(_, item)| matches!(item, Js::Hidden))
    {
        return fail(
            &member(path, &key.text),
            "must be an enumerable data property",
        );
    }
    if object.symbols {
        return fail(path, "symbol properties are not supported");
    }
    Ok(())
}

/// `assertRecord`: an object whose prototype is exactly `Object.prototype`, holding only
/// enumerable data properties.
pub fn record(value: &Js, path: &str) -> Read<()> {
    match value {
        Js::Object(o) if o.proto == Proto::Plain => data_members(value, path),
        _ => fail(path, "must be a plain object"),
    }
}

/// `assertExactKeys`: every required key own, and no key outside required and optional.
pub fn exact_keys(value: &Js, required: &[&str], optional: &[&str], path: &str) -> Read<()> {
    if exactly(value, required, optional) {
        return Ok(());
    }
    // Something is wrong: the checks in the contract's order, for its first failure.
    for key in required {
        if !value.has_own(key) {
            return fail(&member(path, key), "is required");
        }
    }
    data_members(value, path)?;
    let Js::Object(object) = value else {
        return Ok(());
    };
    for (key, _) in &object.members {
        let permitted = key.lone.is_none()
            && (required.contains(&key.text.as_str()) || optional.contains(&key.text.as_str()));
        if !permitted {
            return fail(&member(path, &key.text), "is not supported");
        }
    }
    Ok(())
}

/// Whether `value` passes [`exact_keys`], in one pass over its members (the common case; each
/// key is compared with the permitted ones once): an object of enumerable data members only, no
/// symbol, each key permitted, every required key among them. Up to 64 required keys.
fn exactly(value: &Js, required: &[&str], optional: &[&str]) -> bool {
    let Js::Object(object) = value else {
        return false;
    };
    if object.symbols || required.len() > 64 {
        return false;
    }
    let mut seen = 0u64;
    for (key, item) in &object.members {
        if key.lone.is_some() || matches!(item, Js::Hidden) {
            return false;
        }
        let key = key.text.as_str();
        match required.iter().position(|r| *r == key) {
            Some(i) => seen |= 1 << i,
            None if optional.contains(&key) => {}
            None => return false,
        }
    }
    // Keys are unique, so each required key found sets its own bit.
    seen.count_ones() as usize == required.len()
}

/// `assertRecord` then `assertExactKeys`.
pub fn exact_record(value: &Js, required: &[&str], optional: &[&str], path: &str) -> Read<()> {
    record(value, path)?;
    exact_keys(value, required, optional, path)
}

/// A member as the TypeScript contract reads it (`value[key]`): absent is `undefined`.
pub fn field<'v>(value: &'v Js, key: &str) -> &'v Js {
    value.get(key).unwrap_or(&Js::Undefined)
}

/// `readString`: a non-empty, well-formed string.
pub fn string<'v>(value: &'v Js, path: &str) -> Read<&'v str> {
    match value {
        Js::Str(s) if !s.text.is_empty() => {
            well_formed(s, path)?;
            Ok(&s.text)
        }
        _ => fail(path, "must be a non-empty string"),
    }
}

/// `readOptionalString`.
pub fn optional_string<'v>(value: &'v Js, path: &str) -> Read<Option<&'v str>> {
    optional(value, |v| string(v, path))
}

/// `readIdentifier`: a string without ASCII whitespace or control characters.
pub fn identifier<'v>(value: &'v Js, path: &str) -> Read<&'v str> {
    let text = string(value, path)?;
    if text.bytes().any(|b| b <= 0x20 || b == 0x7f) {
        return fail(
            path,
            "identifier must not contain ASCII whitespace or control characters",
        );
    }
    Ok(text)
}

/// `readOptionalIdentifier`.
pub fn optional_identifier<'v>(value: &'v Js, path: &str) -> Read<Option<&'v str>> {
    optional(value, |v| identifier(v, path))
}

/// `readInteger`: a safe integer, not -0, at least `minimum`.
pub fn integer(value: &Js, path: &str, minimum: i64) -> Read<i64> {
    match value.safe_integer() {
        Some(n) if n >= minimum => Ok(n),
        _ => fail(path, format!("must be a safe integer >= {minimum}")),
    }
}

/// `readOptionalInteger`.
pub fn optional_integer(value: &Js, path: &str, minimum: i64) -> Read<Option<i64>> {
    optional(value, |v| integer(v, path, minimum))
}

/// `readBoolean`.
pub fn boolean(value: &Js, path: &str) -> Read<bool> {
    match value {
        Js::Bool(b) => Ok(*b),
        _ => fail(path, "must be a boolean"),
    }
}

/// `readOptionalBoolean`.
pub fn optional_boolean(value: &Js, path: &str) -> Read<Option<bool>> {
    optional(value, |v| boolean(v, path))
}

/// `readEnum`: one of `allowed`, exactly.
pub fn one_of<'a>(value: &Js, allowed: &[&'a str], path: &str) -> Read<&'a str> {
    if let Some(text) = value.as_str()
        && let Some(found) = allowed.iter().find(|a| **a == text)
    {
        return Ok(found);
    }
    fail(path, format!("must be one of: {}", allowed.join(", ")))
}

/// The elements of a dense array of enumerable data elements with no other own keys.
pub fn dense_array<'v>(value: &'v Js, path: &str) -> Read<Vec<&'v Js>> {
    let Js::Array(JsArray { items, extra_keys }) = value else {
        return fail(path, "must be an array");
    };
    for (index, item) in items.iter().enumerate() {
        if matches!(item, Some(Js::Hidden)) {
            return fail(&element(path, index), "must be an enumerable data property");
        }
    }
    if *extra_keys {
        return fail(path, "array must not have symbol or non-index properties");
    }
    let mut out = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        match item {
            Some(v) => out.push(v),
            None => {
                return fail(
                    &element(path, index),
                    "sparse array holes are not supported",
                );
            }
        }
    }
    Ok(out)
}

/// `readStringArray`.
pub fn string_array<'v>(value: &'v Js, path: &str) -> Read<Vec<&'v str>> {
    dense_array(value, path)?
        .into_iter()
        .enumerate()
        .map(|(i, v)| string(v, &element(path, i)))
        .collect()
}

/// `readTimestamp`: `YYYY-MM-DDTHH:MM:SS.mmmZ` naming a real instant of the proleptic Gregorian
/// calendar (what `new Date(Date.parse(s)).toISOString() === s` accepts).
pub fn timestamp<'v>(value: &'v Js, path: &str) -> Read<&'v str> {
    let text = string(value, path)?;
    if parse_timestamp(text).is_none() {
        return fail(path, "must be a canonical UTC ISO-8601 timestamp");
    }
    Ok(text)
}

/// `readOptionalTimestamp`.
pub fn optional_timestamp<'v>(value: &'v Js, path: &str) -> Read<Option<&'v str>> {
    optional(value, |v| timestamp(v, path))
}

/// `readHexDigest`: 64 lowercase hex digits.
pub fn hex_digest<'v>(value: &'v Js, path: &str) -> Read<&'v str> {
    let text = string(value, path)?;
    if text.len() != 64 || !text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return fail(path, "must be a lowercase SHA-256 digest");
    }
    Ok(text)
}

/// `None` for `undefined`, else the reader's result.
pub fn optional<'v, T>(value: &'v Js, read: impl FnOnce(&'v Js) -> Read<T>) -> Read<Option<T>> {
    match value {
        Js::Undefined => Ok(None),
        v => read(v).map(Some),
    }
}

/// Milliseconds since the epoch of a canonical timestamp (`Date.parse`), or `None` when the text
/// is not one. TypeScript's rule is narrower than RFC 3339: only the one spelling
/// `toISOString` writes of an instant, which is [`crate::time::parse_canonical_ms`] (the core's
/// RFC 3339 reader, then the text must be exactly `format_ms` of what it read).
pub fn parse_timestamp(text: &str) -> Option<i64> {
    crate::time::parse_canonical_ms(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(text: &str) -> Js {
        Js::parse_snapshot(text).unwrap()
    }

    fn message<T: std::fmt::Debug>(result: Read<T>) -> String {
        result.unwrap_err().to_string()
    }

    #[test]
    fn timestamps_follow_javascript_round_trip() {
        for ok in [
            "2024-02-29T00:00:00.000Z",
            "0000-01-01T00:00:00.000Z",
            "2026-12-01T23:59:59.999Z",
        ] {
            assert!(parse_timestamp(ok).is_some(), "{ok}");
        }
        for bad in [
            "2023-02-29T00:00:00.000Z",
            "2024-02-31T00:00:00.000Z",
            "2024-01-01T24:00:00.000Z",
            "2024-01-01T00:00:60.000Z",
            "2024-01-01T00:00:00.000z",
            "2024-01-01T00:00:00Z",
            "+02024-01-01T00:00:00.000Z",
            "２024-01-01T00:00:00.000Z",
        ] {
            assert!(parse_timestamp(bad).is_none(), "{bad}");
        }
        assert_eq!(parse_timestamp("1970-01-01T00:00:01.500Z"), Some(1500));
        assert_eq!(parse_timestamp("1969-12-31T23:59:59.999Z"), Some(-1));
        assert_eq!(
            parse_timestamp("2000-03-01T00:00:00.000Z"),
            Some(951_868_800_000)
        );
    }

    #[test]
    fn readers_give_the_contract_messages() {
        assert_eq!(
            message(string(&js("\"\""), "$.a")),
            "$.a: must be a non-empty string"
        );
        assert_eq!(
            message(string(&js(r#""\udc00""#), "$.a")),
            "$.a: string contains an unpaired low surrogate"
        );
        assert_eq!(
            message(integer(&js("-0"), "n", 0)),
            "n: must be a safe integer >= 0"
        );
        assert_eq!(
            message(integer(&js("1.5"), "n", 1)),
            "n: must be a safe integer >= 1"
        );
        assert_eq!(
            integer(&js("9007199254740991"), "n", 1).unwrap(),
            9_007_199_254_740_991
        );
        assert!(integer(&js("9007199254740992"), "n", 1).is_err());
        assert_eq!(
            message(one_of(&js("\"c\""), &["a", "b"], "$.k")),
            "$.k: must be one of: a, b"
        );
        assert_eq!(
            message(identifier(&js("\"a b\""), "id")),
            "id: identifier must not contain ASCII whitespace or control characters"
        );
        assert!(identifier(&js("\"a\u{a0}b\""), "id").is_ok());
        assert_eq!(
            message(hex_digest(&js("\"AB\""), "d")),
            "d: must be a lowercase SHA-256 digest"
        );
        assert_eq!(optional_string(&js("u"), "x").unwrap(), None);
    }

    #[test]
    fn records_and_keys() {
        assert_eq!(message(record(&js("[]"), "$")), "$: must be a plain object");
        assert_eq!(
            message(record(&js("{#}"), "$")),
            "$: must be a plain object"
        );
        assert_eq!(
            message(record(&js(r#"{"m":h}"#), "$")),
            "$.m: must be an enumerable data property"
        );
        assert_eq!(
            message(record(&js("{!}"), "$")),
            "$: symbol properties are not supported"
        );
        let v = js(r#"{"a":1,"z":2}"#);
        assert_eq!(
            message(exact_keys(&v, &["a", "b"], &[], "$")),
            "$.b: is required"
        );
        assert_eq!(
            message(exact_keys(&v, &["a"], &[], "$")),
            "$.z: is not supported"
        );
        assert!(exact_keys(&v, &["a"], &["z"], "$").is_ok());
        // An accessor is own (required is satisfied) but is then refused.
        let v = js(r#"{"a":h}"#);
        assert_eq!(
            message(exact_keys(&v, &["a"], &[], "$")),
            "$.a: must be an enumerable data property"
        );
    }

    #[test]
    fn the_one_pass_key_check_passes_exactly_what_the_ordered_checks_pass() {
        let values = [
            "{}",
            "{#}",
            "{@}",
            "{!}",
            "[]",
            "1",
            "u",
            r#"{"a":1}"#,
            r#"{"a":1,"b":2}"#,
            r#"{"b":2,"a":1}"#,
            r#"{"a":h}"#,
            r#"{"a":1,"z":2}"#,
            r#"{!"a":1}"#,
            r#"{"a":1,"\ud800":2}"#,
            r#"{"\ud800":1}"#,
            r#"{"a":1,"b":2,"c":3}"#,
        ];
        let lists: [&[&str]; 5] = [&[], &["a"], &["a", "b"], &["a", "a"], &["x"]];
        let wide: Vec<String> = (0..70).map(|i| format!("k{i}")).collect();
        let wide: Vec<&str> = wide.iter().map(String::as_str).collect();
        for value in values {
            let v = js(value);
            for required in lists.iter().copied().chain([wide.as_slice()]) {
                for optional in lists {
                    let fast = exactly(&v, required, optional);
                    let ordered = exact_keys(&v, required, optional, "$").is_ok();
                    // The one pass never passes what the ordered checks refuse; where it
                    // declines, exact_keys still answers by the ordered checks.
                    assert!(!fast || ordered, "{value} {required:?} {optional:?}");
                    let duplicated = required.len() == 2 && required[0] == required[1];
                    // (A value that is not an object passes the ordered checks when nothing
                    // is required: the one pass leaves that to them.)
                    if ordered && !duplicated && matches!(v, Js::Object(_)) {
                        assert!(fast, "{value} {required:?} {optional:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn arrays() {
        assert_eq!(
            message(dense_array(&js("[1,_,3]"), "$")),
            "$[1]: sparse array holes are not supported"
        );
        assert_eq!(
            message(dense_array(&js("[!1]"), "$")),
            "$: array must not have symbol or non-index properties"
        );
        assert_eq!(
            message(dense_array(&js("[!1,h]"), "$")),
            "$[1]: must be an enumerable data property"
        );
        assert_eq!(
            message(string_array(&js(r#"["a",1]"#), "$.l")),
            "$.l[1]: must be a non-empty string"
        );
        assert_eq!(message(dense_array(&js("{}"), "$")), "$: must be an array");
    }
}
