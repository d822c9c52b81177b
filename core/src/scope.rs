//! Scope ids: parsing and comparison.
//!
//! A scope is either absent (the unscoped group) or a string matching
//! [`SCOPE_ID_PATTERN_SOURCE`](crate::protocol::SCOPE_ID_PATTERN_SOURCE) byte for byte. Nothing
//! is trimmed, case-folded, normalized or hashed: `" Scope_AAAAAAAAAA"` and
//! `"Scope_AAAAAAAAAA\n"` are invalid, not repaired. Errors never echo the rejected value,
//! because a scope id is a capability.

use crate::error::{Error, ErrorCode};
use crate::protocol::{SCOPE_ENV, SCOPE_ID_MAX_LEN, SCOPE_ID_MIN_LEN};

/// A validated scope id. Construct it with [`ScopeId::parse`] or [`parse_scope`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScopeId<'a>(&'a str);

impl<'a> ScopeId<'a> {
    /// Validates `value` as a non-empty scope id.
    pub fn parse(value: &'a str) -> Option<ScopeId<'a>> {
        is_valid_scope_id(value).then_some(ScopeId(value))
    }

    /// The scope id text.
    pub fn as_str(&self) -> &'a str {
        self.0
    }
}

/// A session's scope: `None` is the unscoped group.
pub type Scope<'a> = Option<ScopeId<'a>>;

/// True when `value` matches `^[A-Za-z0-9_-]{16,128}$` exactly.
pub fn is_valid_scope_id(value: &str) -> bool {
    let bytes = value.as_bytes();
    (SCOPE_ID_MIN_LEN..=SCOPE_ID_MAX_LEN).contains(&bytes.len())
        && bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Parses a scope input: `None` (absent) and `""` are unscoped; anything else must be a valid
/// scope id. `path` names the input in the error message (the TypeScript core uses `scopeId`).
pub fn parse_scope<'a>(value: Option<&'a str>, path: &str) -> Result<Scope<'a>, Error> {
    match value {
        None | Some("") => Ok(None),
        Some(text) => ScopeId::parse(text)
            .map(Some)
            .ok_or_else(|| invalid_scope(path)),
    }
}

/// A scope input as it arrives from a dynamically typed source (JSON, JavaScript, a vector).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeInput<'a> {
    /// Absent (`undefined`, a missing key): the unscoped group.
    Absent,
    /// A string: `""` is unscoped, anything else must be a valid scope id.
    Text(&'a str),
    /// Anything else (a number, `null`, an object ...): always invalid.
    NotText,
}

/// Parses a dynamically typed scope input: absent and `""` are unscoped, a non-string is
/// invalid, a string must match the pattern.
pub fn parse_scope_input<'a>(input: ScopeInput<'a>, path: &str) -> Result<Scope<'a>, Error> {
    match input {
        ScopeInput::Absent => Ok(None),
        ScopeInput::Text(text) => parse_scope(Some(text), path),
        ScopeInput::NotText => Err(invalid_scope(path)),
    }
}

/// What follows the input's name in an invalid-scope message (bindings that build the message
/// themselves append exactly this).
pub const INVALID_SCOPE_MESSAGE_SUFFIX: &str = " must match ^[A-Za-z0-9_-]{16,128}$";

/// The error for an invalid scope at `path`. The rejected value is deliberately not included.
pub fn invalid_scope(path: &str) -> Error {
    Error::new(
        ErrorCode::InvalidScope,
        format!("{path}{INVALID_SCOPE_MESSAGE_SUFFIX}"),
    )
}

/// Reads the scope from the value of [`SCOPE_ENV`] (pass `std::env::var_os` of it, or `None`).
/// A value that is not valid Unicode is invalid.
pub fn scope_from_env_value(value: Option<&std::ffi::OsStr>) -> Result<Scope<'_>, Error> {
    match value {
        None => Ok(None),
        Some(os) => match os.to_str() {
            Some(text) => parse_scope(Some(text), SCOPE_ENV),
            None => Err(invalid_scope(SCOPE_ENV)),
        },
    }
}

/// Strict equality of two scopes: the unscoped group equals only itself.
pub fn same_scope(left: Scope<'_>, right: Scope<'_>) -> bool {
    left == right
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::SCOPE_ID_PATTERN_SOURCE;

    #[test]
    fn dynamic_inputs() {
        assert_eq!(parse_scope_input(ScopeInput::Absent, "s"), Ok(None));
        assert_eq!(parse_scope_input(ScopeInput::Text(""), "s"), Ok(None));
        assert!(
            parse_scope_input(ScopeInput::Text("Scope_AAAAAAAAAA"), "s")
                .unwrap()
                .is_some()
        );
        assert_eq!(
            parse_scope_input(ScopeInput::NotText, "s")
                .unwrap_err()
                .code(),
            ErrorCode::InvalidScope
        );
    }

    #[test]
    fn message_suffix_names_the_pattern() {
        assert_eq!(
            INVALID_SCOPE_MESSAGE_SUFFIX,
            format!(" must match {SCOPE_ID_PATTERN_SOURCE}")
        );
    }

    #[test]
    fn absent_and_empty_are_unscoped() {
        assert_eq!(parse_scope(None, "scopeId"), Ok(None));
        assert_eq!(parse_scope(Some(""), "scopeId"), Ok(None));
    }

    #[test]
    fn bounds_and_alphabet() {
        assert!(is_valid_scope_id(&"A".repeat(16)));
        assert!(is_valid_scope_id(&"a".repeat(128)));
        assert!(is_valid_scope_id("0123456789_-abcXYZ"));
        assert!(!is_valid_scope_id(&"A".repeat(15)));
        assert!(!is_valid_scope_id(&"A".repeat(129)));
        for bad in [
            "Scope_AAAAAAAAAA\n",
            " Scope_AAAAAAAAAA",
            "Scope.AAAAAAAAAA",
            "éAAAAAAAAAAAAAAA",
            "Scope_AAAAAAAAA\0",
        ] {
            assert!(!is_valid_scope_id(bad), "{bad:?}");
        }
    }

    #[test]
    fn error_names_path_and_hides_value() {
        let secret = "Secret_Scope_Value!";
        let err = parse_scope(Some(secret), "session.scopeId").unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidScope);
        assert_eq!(
            err.message(),
            "session.scopeId must match ^[A-Za-z0-9_-]{16,128}$"
        );
        assert!(!err.to_string().contains(secret));
    }

    #[test]
    fn env_value() {
        use std::ffi::OsStr;
        assert_eq!(scope_from_env_value(None), Ok(None));
        assert_eq!(scope_from_env_value(Some(OsStr::new(""))), Ok(None));
        let ok = scope_from_env_value(Some(OsStr::new("Scope_AAAAAAAAAA"))).unwrap();
        assert_eq!(ok.map(|s| s.as_str()), Some("Scope_AAAAAAAAAA"));
        let err = scope_from_env_value(Some(OsStr::new("nope"))).unwrap_err();
        assert!(
            err.message()
                .starts_with("AGENT_INTERCOM_SCOPE_ID must match")
        );
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let bad = OsStr::from_bytes(b"Scope_AAAAAAAAA\xff");
            assert_eq!(
                scope_from_env_value(Some(bad)).unwrap_err().code(),
                ErrorCode::InvalidScope
            );
        }
    }

    #[test]
    fn same_scope_is_strict() {
        let a = ScopeId::parse("Scope_AAAAAAAAAA");
        let a2 = ScopeId::parse("Scope_AAAAAAAAAA");
        let b = ScopeId::parse("Scope_BBBBBBBBBB");
        let lower = ScopeId::parse("scope_aaaaaaaaaa");
        assert!(same_scope(None, None));
        assert!(same_scope(a, a2));
        assert!(!same_scope(a, b));
        assert!(!same_scope(a, None));
        assert!(!same_scope(None, a));
        assert!(!same_scope(a, lower));
    }
}
