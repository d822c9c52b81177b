//! Protocol-v4 identity constants. Every binding reads these; none retypes them.

/// The wire protocol name every adapter registers with.
pub const PROTOCOL_NAME: &str = "pi-intercom";
/// The wire protocol version. There is no downgrade.
pub const PROTOCOL_VERSION: u32 = 4;
/// The environment variable that carries a session's scope id.
pub const SCOPE_ENV: &str = "AGENT_INTERCOM_SCOPE_ID";
/// The scope id pattern, as a regular-expression source (ECMAScript and Rust syntax agree).
pub const SCOPE_ID_PATTERN_SOURCE: &str = "^[A-Za-z0-9_-]{16,128}$";
/// Shortest valid scope id, in bytes.
pub const SCOPE_ID_MIN_LEN: usize = 16;
/// Longest valid scope id, in bytes.
pub const SCOPE_ID_MAX_LEN: usize = 128;
/// Schema version of the acceptance-vector corpus.
pub const VECTOR_SCHEMA_VERSION: u32 = 2;
/// Fixture scope A of the acceptance corpus.
pub const SCOPE_A: &str = "Scope_AAAAAAAAAA";
/// Fixture scope B of the acceptance corpus.
pub const SCOPE_B: &str = "Scope_BBBBBBBBBB";
/// Hash domain of the acceptance-corpus semantics hash.
pub const VECTORS_HASH_DOMAIN: &str = "agent-intercom-core/protocol-v4/acceptance-vectors";
/// The semantics hash the whole ecosystem asserts. [`crate::corpus::semantics_hash`] must
/// reproduce it from the corpus; a test fails otherwise.
pub const KNOWN_SEMANTICS_HASH: &str =
    "ef23cae55b3cca7683fee60e5f2421350cde731dc5424c82286a33a8b9cdf6cb";
