//! Reading an envelope's members (in the documented order, naming each refusal's path), building
//! one from [`Fields`], its signing input, and its timestamps.

use std::borrow::Cow;

use super::{
    ContentType, FORMAT_VERSION, Fields, MAX_CAPABILITIES, MAX_ENVELOPE_BYTES, MAX_ID_BYTES,
    MAX_LIFETIME_MS, MEMBERS, MIN_NONCE_BYTES, SIGNING_DOMAIN, Sender, SignatureKind, keys,
};
use crate::canonical::{self, Value};
use crate::error::{Error, ErrorCode};

/// An `ENVELOPE_MALFORMED` refusal at `path`.
pub(crate) fn malformed(path: &str, detail: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::EnvelopeMalformed, format!("{path}: {detail}"))
}

/// The path of member `key` of the object at `path`: `$.key`, or `$["k y"]` for a key that is
/// not an identifier (a long one shortened).
pub(crate) fn member_path(path: &str, key: &str) -> String {
    let plain = key
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if plain && key.len() <= 64 {
        return format!("{path}.{key}");
    }
    let mut shown: String = key.chars().take(64).collect();
    if shown.len() < key.len() {
        shown.push('…');
    }
    format!("{path}[{}]", super::quote(&shown))
}

/// The input as a JSON tree: `ENVELOPE_TOO_LARGE` before anything is read, then
/// `ENVELOPE_MALFORMED` for what is not UTF-8 or not canonical-JSON data.
pub(crate) fn parse_input(input: &[u8]) -> Result<Value<'_>, Error> {
    if input.len() > MAX_ENVELOPE_BYTES {
        return Err(Error::new(
            ErrorCode::EnvelopeTooLarge,
            format!(
                "the envelope is {} bytes; at most {MAX_ENVELOPE_BYTES} are accepted",
                input.len()
            ),
        ));
    }
    let text = std::str::from_utf8(input).map_err(|e| {
        malformed(
            "$",
            format!("not UTF-8 (invalid byte at offset {})", e.valid_up_to()),
        )
    })?;
    let not_canonical = |e: Error| {
        malformed(
            "$",
            format!("not canonical JSON data: {} ({})", e.message(), e.code()),
        )
    };
    let tree = canonical::parse(text).map_err(not_canonical)?;
    // What only the encoder checks (a repeated key) is refused here, once.
    canonical::canonical_json(&tree).map_err(not_canonical)?;
    Ok(tree)
}

/// A string member that is an identifier: 1 to [`MAX_ID_BYTES`] bytes, no control character.
fn identifier<'v>(value: Option<&'v Value<'_>>, path: &str) -> Result<&'v str, Error> {
    let text = match value {
        None => return Err(malformed(path, "is required")),
        Some(Value::String(s)) => s.as_ref(),
        Some(_) => return Err(malformed(path, "must be a string")),
    };
    if text.is_empty() || text.len() > MAX_ID_BYTES {
        return Err(malformed(
            path,
            format!("must be 1 to {MAX_ID_BYTES} bytes"),
        ));
    }
    if text.chars().any(char::is_control) {
        return Err(malformed(path, "must hold no control character"));
    }
    Ok(text)
}

fn timestamp(value: Option<&Value<'_>>, path: &str) -> Result<i64, Error> {
    match value {
        None => Err(malformed(path, "is required")),
        Some(Value::String(s)) => parse_timestamp(s).ok_or_else(|| {
            malformed(
                path,
                "must be an RFC 3339 UTC time with milliseconds (YYYY-MM-DDTHH:MM:SS.mmmZ)",
            )
        }),
        Some(_) => Err(malformed(path, "must be a string")),
    }
}

fn refuse_unknown(
    members: &[(Cow<'_, str>, Value<'_>)],
    known: &[&str],
    path: &str,
) -> Result<(), Error> {
    match members.iter().find(|(k, _)| !known.contains(&k.as_ref())) {
        Some((key, _)) => Err(malformed(&member_path(path, key), "unknown member")),
        None => Ok(()),
    }
}

/// A key id: 1 to [`MAX_ID_BYTES`] bytes of printable ASCII without space; `code` otherwise.
pub(crate) fn check_key_id(key_id: &str, code: ErrorCode) -> Result<(), Error> {
    if key_id.is_empty()
        || key_id.len() > MAX_ID_BYTES
        || !key_id.bytes().all(|b| (0x21..=0x7e).contains(&b))
    {
        return Err(Error::new(
            code,
            format!(
                "$.signature.key_id: must be 1 to {MAX_ID_BYTES} bytes of printable ASCII \
                 without space"
            ),
        ));
    }
    Ok(())
}

/// The members of an envelope (steps 2 to 4 of the verification order), checking that
/// `signature` is absent unless `signed`.
pub(crate) fn read_fields(tree: &Value<'_>, signed: bool) -> Result<Fields, Error> {
    let Value::Object(members) = tree else {
        return Err(malformed("$", "an envelope is a JSON object"));
    };
    match tree.get("format_version") {
        None => return Err(malformed("$.format_version", "is required")),
        Some(Value::Int(FORMAT_VERSION)) => {}
        Some(Value::Int(other)) => {
            return Err(Error::new(
                ErrorCode::UnsupportedFormatVersion,
                format!(
                    "$.format_version: {other} is not supported; this version reads format \
                     {FORMAT_VERSION}"
                ),
            ));
        }
        Some(_) => return Err(malformed("$.format_version", "must be an integer")),
    }
    let known = if signed { &MEMBERS[..] } else { &MEMBERS[..9] };
    refuse_unknown(members, known, "$")?;
    let sent_at_ms = timestamp(tree.get("sent_at"), "$.sent_at")?;
    let sender = read_sender(tree.get("sender"))?;
    let recipient = match tree.get("recipient") {
        None => return Err(malformed("$.recipient", "is required (null for none)")),
        Some(Value::Null) => None,
        value => Some(identifier(value, "$.recipient")?.to_string()),
    };
    let content_type = match tree.get("content_type") {
        None => return Err(malformed("$.content_type", "is required")),
        Some(Value::String(s)) => ContentType::parse(s).ok_or_else(|| {
            malformed(
                "$.content_type",
                "must be one of: handoff_bundle, context_package, a2a_message, a2a_task",
            )
        })?,
        Some(_) => return Err(malformed("$.content_type", "must be a string")),
    };
    let payload = match tree.get("payload") {
        None => return Err(malformed("$.payload", "is required")),
        Some(value) => value.owned(),
    };
    let metadata = match tree.get("metadata") {
        None => return Err(malformed("$.metadata", "is required ({} for none)")),
        Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.to_string(), v.owned())).collect(),
        Some(_) => return Err(malformed("$.metadata", "must be an object")),
    };
    let nonce = identifier(tree.get("nonce"), "$.nonce")?;
    if nonce.len() < MIN_NONCE_BYTES || !nonce.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        return Err(malformed(
            "$.nonce",
            format!(
                "must be {MIN_NONCE_BYTES} to {MAX_ID_BYTES} bytes of printable ASCII without \
                 space"
            ),
        ));
    }
    let expires_at_ms = timestamp(tree.get("expires_at"), "$.expires_at")?;
    if expires_at_ms <= sent_at_ms {
        return Err(malformed("$.expires_at", "must be after sent_at"));
    }
    if expires_at_ms - sent_at_ms > MAX_LIFETIME_MS {
        return Err(malformed(
            "$.expires_at",
            format!("must be at most {MAX_LIFETIME_MS} ms after sent_at"),
        ));
    }
    Ok(Fields {
        sent_at_ms,
        sender,
        recipient,
        content_type,
        payload,
        metadata,
        nonce: nonce.to_string(),
        expires_at_ms,
    })
}

fn read_sender(value: Option<&Value<'_>>) -> Result<Sender, Error> {
    let sender = match value {
        None => return Err(malformed("$.sender", "is required")),
        Some(v @ Value::Object(members)) => {
            refuse_unknown(
                members,
                &[
                    "agent_id",
                    "agent_type",
                    "daemon_fingerprint",
                    "capabilities",
                ],
                "$.sender",
            )?;
            v
        }
        Some(_) => return Err(malformed("$.sender", "must be an object")),
    };
    let id = |key: &str| identifier(sender.get(key), &format!("$.sender.{key}"));
    let (agent_id, agent_type, fingerprint) = (
        id("agent_id")?,
        id("agent_type")?,
        id("daemon_fingerprint")?,
    );
    let items = match sender.get("capabilities") {
        None => {
            return Err(malformed(
                "$.sender.capabilities",
                "is required ([] for none)",
            ));
        }
        Some(Value::Array(items)) => items,
        Some(_) => return Err(malformed("$.sender.capabilities", "must be an array")),
    };
    if items.len() > MAX_CAPABILITIES {
        return Err(malformed(
            "$.sender.capabilities",
            format!("may list at most {MAX_CAPABILITIES} capabilities"),
        ));
    }
    let mut capabilities: Vec<String> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let path = format!("$.sender.capabilities[{index}]");
        let capability = identifier(Some(item), &path)?;
        if capabilities.iter().any(|c| c == capability) {
            return Err(malformed(&path, "repeats an earlier capability"));
        }
        capabilities.push(capability.to_string());
    }
    Ok(Sender {
        agent_id: agent_id.to_string(),
        agent_type: agent_type.to_string(),
        daemon_fingerprint: fingerprint.to_string(),
        capabilities,
    })
}

/// The `signature` member, read.
#[derive(Clone, Debug)]
pub(crate) struct SignatureRef {
    pub(crate) kind: SignatureKind,
    pub(crate) key_id: String,
    pub(crate) value: Vec<u8>,
}

/// The `signature` member (steps 5 and 6).
pub(crate) fn read_signature(tree: &Value<'_>) -> Result<SignatureRef, Error> {
    let missing = || {
        Error::new(
            ErrorCode::SignatureMissing,
            "$.signature: the envelope is not signed",
        )
    };
    let bad = |path: &str, detail: &str| {
        Error::new(ErrorCode::SignatureMalformed, format!("{path}: {detail}"))
    };
    let signature = match tree.get("signature") {
        None | Some(Value::Null) => return Err(missing()),
        Some(v @ Value::Object(members)) => {
            refuse_unknown(members, &["kind", "key_id", "value"], "$.signature")?;
            v
        }
        Some(_) => {
            return Err(bad(
                "$.signature",
                "must be an object {kind, key_id, value}",
            ));
        }
    };
    let value = match signature.get("value") {
        None | Some(Value::Null) => return Err(missing()),
        Some(Value::String(s)) if s.is_empty() => return Err(missing()),
        Some(Value::String(s)) => s.as_ref(),
        Some(_) => return Err(bad("$.signature.value", "must be a base64 string")),
    };
    let kind = match signature.get("kind") {
        Some(Value::String(s)) => SignatureKind::parse(s),
        _ => None,
    }
    .ok_or_else(|| bad("$.signature.kind", "must be \"ed25519\" or \"hmac-sha256\""))?;
    let key_id = match signature.get("key_id") {
        Some(Value::String(s)) => s.as_ref(),
        _ => return Err(bad("$.signature.key_id", "must be a string")),
    };
    check_key_id(key_id, ErrorCode::SignatureMalformed)?;
    let value = keys::base64_decode(value)
        .filter(|bytes| bytes.len() == kind.value_len())
        .ok_or_else(|| {
            Error::new(
                ErrorCode::SignatureMalformed,
                format!(
                    "$.signature.value: must be the padded base64 of {} bytes for {}",
                    kind.value_len(),
                    kind.as_str()
                ),
            )
        })?;
    Ok(SignatureRef {
        kind,
        key_id: key_id.to_string(),
        value,
    })
}

/// The canonical frame of the envelope without `signature.value`.
pub(crate) fn signing_input(tree: &Value<'_>) -> Result<Vec<u8>, Error> {
    let Value::Object(members) = tree else {
        return Err(malformed("$", "an envelope is a JSON object"));
    };
    let covered: Vec<(Cow<'_, str>, Value<'_>)> = members
        .iter()
        .map(|(key, value)| match (key.as_ref(), value) {
            ("signature", Value::Object(signature)) => (
                key.clone(),
                Value::Object(
                    signature
                        .iter()
                        .filter(|(k, _)| k != "value")
                        .cloned()
                        .collect(),
                ),
            ),
            _ => (key.clone(), value.clone()),
        })
        .collect();
    canonical::canonical_frame(SIGNING_DOMAIN, &Value::Object(covered))
}

fn text(s: &str) -> Value<'static> {
    Value::String(Cow::Owned(s.to_string()))
}

/// The envelope of `fields`, without its `signature`.
pub(crate) fn fields_value(f: &Fields) -> Value<'static> {
    let sender = Value::Object(vec![
        ("agent_id".into(), text(&f.sender.agent_id)),
        ("agent_type".into(), text(&f.sender.agent_type)),
        (
            "daemon_fingerprint".into(),
            text(&f.sender.daemon_fingerprint),
        ),
        (
            "capabilities".into(),
            Value::Array(f.sender.capabilities.iter().map(|c| text(c)).collect()),
        ),
    ]);
    Value::Object(vec![
        ("format_version".into(), Value::Int(FORMAT_VERSION)),
        ("sent_at".into(), text(&format_timestamp(f.sent_at_ms))),
        ("sender".into(), sender),
        (
            "recipient".into(),
            f.recipient.as_deref().map_or(Value::Null, text),
        ),
        ("content_type".into(), text(f.content_type.as_str())),
        ("payload".into(), f.payload.clone()),
        (
            "metadata".into(),
            Value::Object(
                f.metadata
                    .iter()
                    .map(|(k, v)| (Cow::Owned(k.clone()), v.clone()))
                    .collect(),
            ),
        ),
        ("nonce".into(), text(&f.nonce)),
        (
            "expires_at".into(),
            text(&format_timestamp(f.expires_at_ms)),
        ),
    ])
}

/// Milliseconds since the epoch of an RFC 3339 UTC time with milliseconds
/// (`YYYY-MM-DDTHH:MM:SS.mmmZ`, a real instant of years 0000 to 9999); `None` for anything else.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    crate::time::parse_canonical_ms(text)
}

/// The RFC 3339 UTC time with milliseconds of `ms` since the epoch (years 0000 to 9999; an
/// instant outside them is clamped to their ends).
pub fn format_timestamp(ms: i64) -> String {
    crate::time::format_ms(ms)
}

/// The canonical JSON of the envelope of `fields`, without its `signature`.
#[cfg(test)]
pub(crate) fn canonical_text(f: &Fields) -> String {
    canonical::canonical_json(&fields_value(f)).unwrap_or_default()
}
