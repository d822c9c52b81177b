//! Remote access: the registry of remote principals and enrollment tokens
//! (`broker-access.json`), the local administrator's credential (`broker-admin.json`) and the
//! audit log (`broker-audit.jsonl`), all in the broker's intercom directory and all in the formats
//! the Pi adapter's TypeScript broker reads and writes, so either broker can take over the other's
//! directory.
//!
//! - Secrets (enrollment tokens, session credentials, the admin token) are 32 random bytes in
//!   base64url; only their SHA-256 digests are stored, and they are compared in constant time.
//! - Every change is written durably before it takes effect: if the write fails the operation
//!   returns [`AccessError::Io`] and the registry is exactly as it was.
//! - A file that cannot be understood is refused with a message naming it and is never
//!   overwritten; a symlink where one of these files belongs is never followed.
//!
//! Time is always passed in (`now`, milliseconds since the epoch), so expiry is testable.

mod audit;
mod files;
mod json;
mod registry;
mod secret;
mod state;

use std::fmt;
use std::io;

pub use audit::{AUDIT_EVENTS, AUDIT_OUTCOMES, AUDIT_VERSION, AuditEntry, AuditLog};
pub use files::RUNTIME_FILE_MODE;
pub use registry::{Registry, read_admin_token};

/// The registry of principals and enrollments.
pub const ACCESS_FILE_NAME: &str = "broker-access.json";
/// The local administrator's token, read by the access CLI.
pub const ADMIN_FILE_NAME: &str = "broker-admin.json";
/// One JSON line per access decision.
pub const AUDIT_FILE_NAME: &str = "broker-audit.jsonl";

/// The `version` the registry is written with (version 1 files are read and migrated).
pub const STATE_VERSION: i64 = 2;
/// The `version` of `broker-admin.json`.
pub const ADMIN_CREDENTIAL_VERSION: i64 = 1;
/// The only policy a remote principal has.
pub const PRINCIPAL_POLICY: &str = "remote-tree";

/// Enrollment token lifetime when none is asked for: 10 minutes.
pub const DEFAULT_ENROLLMENT_TTL_MS: i64 = 600_000;
/// The longest enrollment token lifetime: 24 hours.
pub const MAX_ENROLLMENT_TTL_MS: i64 = 86_400_000;
/// Principal lifetime when the template sets no expiry: 30 days.
pub const DEFAULT_PRINCIPAL_TTL_MS: i64 = 30 * 24 * 60 * 60 * 1000;
/// The deepest a delegation tree goes (a direct enrollment has depth 1).
pub const MAX_DEPTH: u32 = 32;
/// The most children a principal may be allowed.
pub const MAX_CHILDREN: u32 = 128;
/// The shortest admin token `broker-admin.json` may hold before it is replaced.
pub const MIN_ADMIN_TOKEN_LENGTH: usize = 32;

/// Whether a principal may still connect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrincipalState {
    /// May connect while unexpired.
    Active,
    /// Revoked (or expired and swept); never active again.
    Revoked,
}

impl PrincipalState {
    /// `"active"` or `"revoked"`, as stored and sent.
    pub fn as_str(self) -> &'static str {
        match self {
            PrincipalState::Active => "active",
            PrincipalState::Revoked => "revoked",
        }
    }
}

/// A remote principal as the registry stores it (`RemotePrincipalRecord`; its `policy` is always
/// [`PRINCIPAL_POLICY`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PrincipalRecord {
    /// Broker-assigned id (a UUID for every principal this broker enrolls).
    pub id: String,
    /// Display name from the enrollment.
    pub name: String,
    /// SHA-256 (hex) of the session credential.
    pub credential_hash: String,
    /// The session or principal that owns this one.
    pub parent_session_id: String,
    /// The local root session of the tree.
    pub root_session_id: String,
    /// The remote host the principal runs on.
    pub remote_host_id: String,
    /// Bumped by every revoke and adoption; a credential carries the generation it was used with.
    pub generation: u64,
    /// Whether it may issue child enrollments.
    pub can_delegate: bool,
    /// 1 for a directly enrolled principal, parent's + 1 for a child.
    pub depth: u32,
    /// The deepest its subtree may go.
    pub max_depth: u32,
    /// How many children (active plus pending) it may have at once.
    pub max_children: u32,
    /// Active or revoked.
    pub state: PrincipalState,
    /// Milliseconds since the epoch.
    pub expires_at: i64,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// Milliseconds since the epoch.
    pub updated_at: i64,
}

impl PrincipalRecord {
    /// `RemotePrincipalMetadata`: the record without `credentialHash`, keys inserted in the Pi
    /// broker's order (id, name, parentSessionId, rootSessionId, remoteHostId, generation, policy,
    /// canDelegate, depth, maxDepth, maxChildren, state, expiresAt, createdAt, updatedAt). The
    /// order survives serialization only with `serde_json`'s `preserve_order`;
    /// [`metadata_text`](Self::metadata_text) writes it regardless.
    pub fn metadata_json(&self) -> serde_json::Map<String, serde_json::Value> {
        use serde_json::Value;
        let mut m = serde_json::Map::new();
        m.insert("id".into(), Value::from(self.id.as_str()));
        m.insert("name".into(), Value::from(self.name.as_str()));
        m.insert(
            "parentSessionId".into(),
            Value::from(self.parent_session_id.as_str()),
        );
        m.insert(
            "rootSessionId".into(),
            Value::from(self.root_session_id.as_str()),
        );
        m.insert(
            "remoteHostId".into(),
            Value::from(self.remote_host_id.as_str()),
        );
        m.insert("generation".into(), Value::from(self.generation));
        m.insert("policy".into(), Value::from(PRINCIPAL_POLICY));
        m.insert("canDelegate".into(), Value::from(self.can_delegate));
        m.insert("depth".into(), Value::from(self.depth));
        m.insert("maxDepth".into(), Value::from(self.max_depth));
        m.insert("maxChildren".into(), Value::from(self.max_children));
        m.insert("state".into(), Value::from(self.state.as_str()));
        m.insert("expiresAt".into(), Value::from(self.expires_at));
        m.insert("createdAt".into(), Value::from(self.created_at));
        m.insert("updatedAt".into(), Value::from(self.updated_at));
        m
    }

    /// [`metadata_json`](Self::metadata_json) as JSON text, keys in the Pi broker's order.
    pub fn metadata_text(&self) -> String {
        let mut out = String::new();
        let mut w = json::ObjectWriter::new(&mut out);
        for key in state::PRINCIPAL_KEYS {
            if *key != "credentialHash" {
                state::write_principal_field(&mut w, key, self);
            }
        }
        w.finish();
        out
    }

    /// `RemotePrincipalSummary` as the Pi broker sends it in `access_control_result`: the
    /// metadata followed by `connected`.
    pub fn summary_text(&self, connected: bool) -> String {
        let mut out = self.metadata_text();
        out.pop();
        out.push_str(if connected {
            ",\"connected\":true}"
        } else {
            ",\"connected\":false}"
        });
        out
    }
}

/// What an administrator (or a delegating principal, through
/// [`Registry::issue_child_enrollment`]) asks a new principal to be.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EnrollmentTemplate {
    /// Display name (trimmed; 1 to 256 UTF-16 units, no control characters).
    pub name: String,
    /// Owner of the new principal (trimmed; up to 512 units).
    pub parent_session_id: String,
    /// Local root of the tree (trimmed; up to 512 units).
    pub root_session_id: String,
    /// Remote host (trimmed; up to 256 units).
    pub remote_host_id: String,
    /// Principal expiry; default now + [`DEFAULT_PRINCIPAL_TTL_MS`].
    pub expires_at: Option<i64>,
    /// Whether the principal may delegate.
    pub can_delegate: bool,
    /// Default 1; 1 to [`MAX_DEPTH`].
    pub depth: Option<u32>,
    /// Default `depth`; `depth` to [`MAX_DEPTH`].
    pub max_depth: Option<u32>,
    /// Default 0; 0 to [`MAX_CHILDREN`].
    pub max_children: Option<u32>,
}

/// What a delegating principal asks its child to be; the rest comes from the parent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChildRequest {
    /// Display name.
    pub name: String,
    /// Default and ceiling: the parent's expiry.
    pub expires_at: Option<i64>,
    /// Whether the child may delegate (needs remaining depth and children).
    pub can_delegate: bool,
    /// Default the child's depth; at most the parent's `max_depth`.
    pub max_depth: Option<u32>,
    /// Default 0; at most the parent's `max_children`.
    pub max_children: Option<u32>,
}

/// A freshly issued, one-use enrollment token (shown once; only its hash is kept).
#[derive(Clone, Debug, PartialEq)]
pub struct Issued {
    /// The token, 43 characters of base64url.
    pub enrollment_token: String,
    /// When the token stops being accepted.
    pub expires_at: i64,
}

/// Why an access operation was refused.
#[derive(Debug)]
pub enum AccessError {
    /// `INVALID_CREDENTIAL`: unknown principal or wrong credential.
    InvalidCredential(&'static str),
    /// `EXPIRED_CREDENTIAL`: the principal's expiry has passed.
    ExpiredCredential,
    /// `REVOKED_CREDENTIAL`: the principal is revoked.
    RevokedCredential,
    /// `STALE_GENERATION`: the credential was presented with an old generation.
    StaleGeneration,
    /// `INVALID_ENROLLMENT`: unknown, consumed or expired token, or a parent that cannot delegate.
    InvalidEnrollment(&'static str),
    /// `INVALID_REQUEST`: a bad argument (name, TTL, limits, an adoption cycle) or a registry or
    /// admin file that cannot be understood (the message names the file).
    Invalid(String),
    /// `IO`: a file could not be read or written. For a mutating operation the in-memory state
    /// was left exactly as before.
    Io(io::Error),
}

impl AccessError {
    /// The stable code: the Pi broker's `RemoteAccessError` codes, `INVALID_REQUEST`, or `IO`.
    pub fn code(&self) -> &'static str {
        match self {
            AccessError::InvalidCredential(_) => "INVALID_CREDENTIAL",
            AccessError::ExpiredCredential => "EXPIRED_CREDENTIAL",
            AccessError::RevokedCredential => "REVOKED_CREDENTIAL",
            AccessError::StaleGeneration => "STALE_GENERATION",
            AccessError::InvalidEnrollment(_) => "INVALID_ENROLLMENT",
            AccessError::Invalid(_) => "INVALID_REQUEST",
            AccessError::Io(_) => "IO",
        }
    }
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AccessError::InvalidCredential(m) | AccessError::InvalidEnrollment(m) => f.write_str(m),
            AccessError::ExpiredCredential => f.write_str("Session credential has expired"),
            AccessError::RevokedCredential => f.write_str("Session credential is revoked"),
            AccessError::StaleGeneration => f.write_str("Session credential generation is stale"),
            AccessError::Invalid(m) => f.write_str(m),
            AccessError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for AccessError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AccessError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for AccessError {
    fn from(e: io::Error) -> AccessError {
        AccessError::Io(e)
    }
}
