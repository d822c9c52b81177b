//! Stable error codes shared by every binding.
//!
//! The numeric values are part of the C ABI (`aic_status`) and the names are the `code` of the
//! JavaScript `Error` objects. Values are append-only: never renumber or reuse one.

use std::fmt;

/// Defines [`ErrorCode`] once: each variant with its doc, its append-only value and its stable
/// name; the list of all codes and the names are generated from the same lines.
macro_rules! error_codes {
    ($( $(#[doc = $doc:literal])+ $variant:ident = $value:literal => $name:literal, )+) => {
        /// A stable error code. `Ok` exists for the C status enum; an error never carries it.
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $( $(#[doc = $doc])+ $variant = $value, )+
        }

        const ALL_CODES: &[ErrorCode] = &[$(ErrorCode::$variant),+];

        impl ErrorCode {
            /// The stable name: the JavaScript `error.code`, and the C constant without
            /// `AIC_STATUS_`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $name,)+
                }
            }
        }
    };
}

error_codes! {
    /// Success (C ABI only).
    Ok = 0 => "OK",
    /// A required pointer argument was NULL.
    NullPointer = 1 => "NULL_POINTER",
    /// A text input was not valid UTF-8.
    InvalidUtf8 = 2 => "INVALID_UTF8",
    /// An argument had the wrong type or shape (for example a malformed candidate list).
    InvalidArgument = 3 => "INVALID_ARGUMENT",
    /// A scope id did not match `^[A-Za-z0-9_-]{16,128}$`.
    InvalidScope = 4 => "INVALID_SCOPE",
    /// A JSON document was not syntactically valid JSON.
    InvalidJson = 5 => "INVALID_JSON",
    /// A number that canonical JSON does not accept: a fraction or exponent, `-0`, or an
    /// integer outside the safe range of plus or minus 2^53 - 1.
    UnsupportedNumber = 6 => "UNSUPPORTED_NUMBER",
    /// A string or key held an unpaired UTF-16 surrogate.
    UnpairedSurrogate = 7 => "UNPAIRED_SURROGATE",
    /// A value JSON cannot represent faithfully (undefined, a function, a class instance, a
    /// sparse array, an accessor property ...). Raised by language bindings.
    UnsupportedValue = 8 => "UNSUPPORTED_VALUE",
    /// An object had the same key twice.
    DuplicateKey = 9 => "DUPLICATE_KEY",
    /// A document nested deeper than 128 levels of arrays and objects (the canonical maximum
    /// depth).
    NestingTooDeep = 10 => "NESTING_TOO_DEEP",
    /// A hash domain was empty or held bytes outside printable ASCII (0x21 to 0x7E).
    InvalidDomain = 11 => "INVALID_DOMAIN",
    /// A Rust panic was caught at a binding boundary. Always a bug: please report it.
    Internal = 12 => "INTERNAL",
    /// A live process already runs the broker of this intercom directory.
    BrokerAlreadyRunning = 13 => "BROKER_ALREADY_RUNNING",
    /// The broker's store could not be used (for example, written by a newer broker).
    BrokerStore = 14 => "BROKER_STORE",
    /// The broker could not create its directory, socket or files.
    BrokerIo = 15 => "BROKER_IO",
    /// A task state change the transition table does not allow.
    InvalidTransition = 16 => "INVALID_TRANSITION",
    /// A time to live outside 1 to 720 hours.
    InvalidTtl = 17 => "INVALID_TTL",
    /// A private message without a recipient.
    PrivateWithoutRecipient = 18 => "PRIVATE_WITHOUT_RECIPIENT",
    /// A store written by a newer version: refused, never rewritten.
    StoreNewerSchema = 19 => "STORE_NEWER_SCHEMA",
    /// A store that is not a readable database: refused, never replaced.
    StoreCorrupt = 20 => "STORE_CORRUPT",
    /// The store could not be read or written (full disk, read-only file, permissions).
    StoreIo = 21 => "STORE_IO",
    /// Content larger than the configured limit.
    ContentTooLarge = 22 => "CONTENT_TOO_LARGE",
    /// The named thing (a task, a message) does not exist or is not visible to the caller.
    NotFound = 23 => "NOT_FOUND",
    /// The caller may not do this (not a task participant; only the creator may cancel).
    Forbidden = 24 => "FORBIDDEN",
    /// A rate limit refused the call; nothing was consumed.
    RateLimited = 25 => "RATE_LIMITED",
    /// A request, option or setting named a key the operation does not take (a typo such as
    /// `Privacy` for `privacy` is refused, never ignored).
    UnknownKey = 26 => "UNKNOWN_KEY",
    /// No usable connection to the broker: it could not be reached, it closed the connection,
    /// or it did not answer in time.
    NotConnected = 27 => "NOT_CONNECTED",
    /// The broker sent something this client cannot use: a frame over the frame limit, a frame
    /// that is not JSON, or an answer the protocol does not define.
    InvalidFrame = 28 => "INVALID_FRAME",
    /// The broker's refusal (its `error` frame): it speaks another protocol or version.
    ProtocolMismatch = 29 => "PROTOCOL_MISMATCH",
    /// The broker's refusal: a malformed or out-of-order request.
    InvalidRequest = 30 => "INVALID_REQUEST",
    /// The broker's refusal: the session id is live in another runtime.
    SessionIdInUse = 31 => "SESSION_ID_IN_USE",
    /// The broker's refusal: a remote credential, an admin token or an access-control request
    /// was rejected.
    AccessDenied = 32 => "ACCESS_DENIED",
    /// The broker's refusal: Boss participant registration is not available.
    BossFeatureUnavailable = 33 => "BOSS_FEATURE_UNAVAILABLE",
    /// The remote-access contract (`remote-access-v1` with the policy semantics version and
    /// hash) or the provenance a remote registration must carry is absent or differs from this
    /// library's (a client check, and a broker refusal of the same name).
    RemoteAccessIncompatible = 34 => "REMOTE_ACCESS_INCOMPATIBLE",
    /// The broker's refusal: its session cap is reached.
    TooManySessions = 35 => "TOO_MANY_SESSIONS",
    /// A transport envelope (or a request body) over its size limit (2 MB for an envelope).
    EnvelopeTooLarge = 36 => "ENVELOPE_TOO_LARGE",
    /// A transport envelope that is not a well-formed `TransportEnvelopeV1` (a member missing,
    /// unknown or of the wrong type, a content type not in the list).
    EnvelopeMalformed = 37 => "ENVELOPE_MALFORMED",
    /// A transport envelope of another `format_version`.
    UnsupportedFormatVersion = 38 => "UNSUPPORTED_FORMAT_VERSION",
    /// No signature where one is required (an unsigned envelope, a request without
    /// `Signature`/`Signature-Input`).
    SignatureMissing = 39 => "SIGNATURE_MISSING",
    /// A signature that cannot be read: not the profile's algorithm, components or parameters,
    /// bad structured-field syntax, a value of the wrong length or encoding.
    SignatureMalformed = 40 => "SIGNATURE_MALFORMED",
    /// A signature by a key id that is not enrolled here (or enrolled for another algorithm).
    UnknownSigningKey = 41 => "UNKNOWN_SIGNING_KEY",
    /// A signature that does not verify over what it covers.
    SignatureInvalid = 42 => "SIGNATURE_INVALID",
    /// An envelope or signature past its expiry (or created longer ago than the window allows).
    SignatureExpired = 43 => "SIGNATURE_EXPIRED",
    /// An envelope or signature created further in the future than the clock skew allows.
    SignatureNotYetValid = 44 => "SIGNATURE_NOT_YET_VALID",
    /// A nonce already seen for this key within its validity: a replay, refused.
    Replayed = 45 => "REPLAYED",
    /// A `Content-Digest` (RFC 9530) that is missing, of an algorithm not accepted, or not the
    /// digest of the body.
    ContentDigestMismatch = 46 => "CONTENT_DIGEST_MISMATCH",
    /// A file, directory, socket or address outside a store could not be used: an input file
    /// that cannot be read, a missing parent directory, a port already in use.
    Io = 47 => "IO",
    /// A peer answered with a refusal (an HTTP error status) that carries no code of this list.
    PeerRefused = 48 => "PEER_REFUSED",
    /// No reply to an ask came within the wait asked for; the ask stays open and its reply, if
    /// one comes, is kept like any other message.
    AskTimeout = 49 => "ASK_TIMEOUT",
    /// The caller cancelled the request before it finished.
    Cancelled = 50 => "CANCELLED",
}

impl ErrorCode {
    /// Every code, in numeric order.
    pub fn all() -> &'static [ErrorCode] {
        ALL_CODES
    }

    /// The code with this numeric value, if any.
    pub fn from_u32(value: u32) -> Option<ErrorCode> {
        ALL_CODES.get(value as usize).copied()
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error with a stable [`ErrorCode`] and a human-readable message.
///
/// Messages name *where* the problem is (a path such as `$.vectors[3].name`, or the argument
/// name) and never echo a rejected scope id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    message: String,
}

impl Error {
    /// A new error. `code` must not be [`ErrorCode::Ok`].
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        debug_assert!(code != ErrorCode::Ok, "an Error never carries OK");
        Error {
            code,
            message: message.into(),
        }
    }

    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message, without the code.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_dense_and_names_unique() {
        for (index, code) in ErrorCode::all().iter().enumerate() {
            assert_eq!(*code as u32, index as u32);
            assert_eq!(ErrorCode::from_u32(index as u32), Some(*code));
        }
        assert_eq!(ErrorCode::from_u32(ErrorCode::all().len() as u32), None);
        let mut names: Vec<_> = ErrorCode::all().iter().map(|c| c.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorCode::all().len());
    }

    #[test]
    fn display_carries_code() {
        let err = Error::new(ErrorCode::InvalidScope, "scopeId must match x");
        assert_eq!(err.to_string(), "scopeId must match x (INVALID_SCOPE)");
        assert_eq!(err.code(), ErrorCode::InvalidScope);
        assert_eq!(err.message(), "scopeId must match x");
    }
}
