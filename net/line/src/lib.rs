//! The signed outbound Agent-to-Agent line (docs/line.md): a local workload asks an enrolled
//! foreign agent to do a public task.
//!
//! The two identities ([`secrets`]), the public configuration and its `PeerPolicy` ([`config`],
//! [`policy`]), the SQLite custody schema behind its migration gate ([`schema`]), the host-only
//! commands that establish the operator credential and the policy ([`host`]), the startup gate
//! of a session ([`startup`]), the capacity ledger charged before any contact ([`ledger`]), the
//! enrolled key and endpoint records ([`keyrec`]), the session's `enroll`, `rotate` and `revoke`
//! ([`authority`]), its `declare-public`, `submit`, `poll`, `cancel` and `read` ([`task`]) over
//! one charged, signed, authenticated exchange at a time ([`exchange`], on the HTTPS client of
//! [`wire`] and the HTTP/1.1 response reader of [`http1`]), and the native run lab
//! ([`native`]). What a task or a run becomes after each exchange is decided by the pure rules
//! of [`transitions`]; every SQL statement is in the private `custody` module. Test-only fault
//! points: [`fault`].
//!
//! Every refusal is a [`LineError`] with a stable snake_case [`Code`]: the `error` member of the
//! session's JSON answers. A message never carries a secret, a key or a credential.

pub mod authority;
pub mod config;
mod custody;
pub mod exchange;
pub mod fault;
pub mod host;
pub mod http1;
pub mod keyrec;
pub mod ledger;
pub mod native;
pub mod policy;
pub mod schema;
pub mod secrets;
pub mod startup;
pub mod task;
pub mod transitions;
pub mod wire;

use std::fmt;

/// The environment variable naming the custody database (an absolute path).
pub const DATABASE_ENV: &str = "AGENT_INTERCOM_LINE_DATABASE";
/// The environment variable naming the workload's Ed25519 signing key (an absolute path).
pub const SIGNING_KEY_ENV: &str = "AGENT_INTERCOM_LINE_SIGNING_KEY_FILE";
/// The environment variable naming the operator's local-access credential (an absolute path).
pub const OPERATOR_CREDENTIAL_ENV: &str = "AGENT_INTERCOM_LINE_OPERATOR_CREDENTIAL_FILE";
/// The name of the outbound session profile.
pub const PROFILE: &str = "outbound-public-text@1";
/// The network allowance every physical exchange reserves, in bytes (512 KiB).
pub const NETWORK_ALLOWANCE: u64 = 512 * 1024;

/// Defines [`Code`] once: each variant with its stable name and the startup exit status of its
/// class.
macro_rules! codes {
    ($( $(#[doc = $doc:literal])+ $variant:ident => $name:literal, $exit:literal; )+) => {
        /// A stable refusal code (the `error` member of a JSON answer).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Code {
            $( $(#[doc = $doc])+ $variant, )+
        }

        impl Code {
            /// Every code.
            pub const ALL: &'static [Code] = &[$(Code::$variant),+];

            /// The stable name.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)+
                }
            }

            /// The exit status of a process that stops at startup with this code, as for
            /// every `agent-intercom` command: 1 when the database could not be used as it is
            /// (a migration is needed, it is busy, unreadable or newer), 2 for configuration,
            /// credentials and every other refused input.
            pub const fn exit_status(self) -> u8 {
                match self {
                    $(Code::$variant => $exit,)+
                }
            }
        }
    };
}

codes! {
    /// A path that must be absolute is not.
    NotAbsolute => "not_absolute", 2;
    /// The public configuration file is unreadable or not exactly its three members.
    ConfigInvalid => "config_invalid", 2;
    /// The policy is not the exact `PeerPolicy` record shape, or a value is out of bounds.
    PolicyInvalid => "policy_invalid", 2;
    /// The operator credential and the workload key are the same file or the same bytes.
    IdentityConflation => "identity_conflation", 2;
    /// The workload signing key is not configured or its file cannot be opened.
    SigningKeyMissing => "signing_key_missing", 2;
    /// The workload signing key is not an Ed25519 PKCS#8 PEM private key in a private file.
    SigningKeyInvalid => "signing_key_invalid", 2;
    /// The fault-injection variables are set in a build without fault injection.
    FaultInjectionUnavailable => "fault_injection_unavailable", 2;
    /// A command-line argument is missing, repeated or unknown.
    Usage => "usage", 2;
    /// The operator credential is not configured or its file cannot be opened.
    CredentialMissing => "credential_missing", 2;
    /// The operator credential file is not a credential (a key, too short, a shared file).
    CredentialInvalid => "credential_invalid", 2;
    /// The host has no operator credential established.
    CredentialNotSet => "credential_not_set", 2;
    /// The operator credential is not the one the host established.
    CredentialRejected => "credential_rejected", 2;
    /// The database is not at the custody revision this build runs.
    MigrationRequired => "migration_required", 1;
    /// The database was written by a newer revision: refused, never rewritten.
    SchemaNewer => "schema_newer", 1;
    /// The file is a database of something else (another application id, foreign tables).
    ForeignDatabase => "foreign_database", 1;
    /// A downgrade while a custody table holds a row.
    DowngradeRefused => "downgrade_refused", 1;
    /// A task names a native owner that revision 2 cannot bind to a run.
    InconsistentWaitOwner => "inconsistent_wait_owner", 1;
    /// The database cannot be opened, read or written.
    StoreIo => "store_io", 1;
    /// Another control process holds this database.
    SessionBusy => "session_busy", 1;
    /// No durable policy of the configured generation exists.
    PolicyNotEstablished => "policy_not_established", 2;
    /// The durable policy of the configured generation differs from the configured one.
    PolicyMismatch => "policy_mismatch", 2;
    /// A newer policy generation is durable: this authority is no longer live.
    StaleGeneration => "stale_generation", 2;
    /// Establishing a generation not newer than the newest durable one.
    GenerationNotNewer => "generation_not_newer", 2;
    /// A policy that changes the ceiling of an existing capacity scope.
    CeilingChanged => "ceiling_changed", 2;
    /// A capacity scope cannot take the charge; nothing was charged.
    CapacityExhausted => "capacity_exhausted", 2;
    /// The outcome is not known (an uncertain commit): keep the task id and inspect it.
    Unknown => "unknown", 2;
    /// An operation the policy does not grant, or a selector it does not list.
    Denied => "denied", 2;
    /// The named task does not exist.
    TaskNotFound => "task_not_found", 2;
    /// An input line that is not one JSON object.
    Malformed => "malformed", 2;
    /// An operation the session does not have (migrate, reset, delete, update-policy ...).
    UnknownOperation => "unknown_operation", 2;
    /// A member of an operation's input is missing, additional or of the wrong type.
    InvalidField => "invalid_field", 2;
    /// A key record that is not an operator-enrolled Ed25519 key of this peer for this workload.
    KeyInvalid => "key_invalid", 2;
    /// An endpoint record that is not a numeric address, a hostname, a port, a path and a CA file.
    EndpointInvalid => "endpoint_invalid", 2;
    /// The peer is already enrolled (its identity and key are immutable; rotate instead).
    AlreadyEnrolled => "already_enrolled", 2;
    /// No enrollment has exactly these selectors.
    NotEnrolled => "not_enrolled", 2;
    /// An authority mutation of this peer is uncertain or unfinished: repeat it.
    Fenced => "fenced", 2;
    /// The peer is revoked.
    Revoked => "revoked", 2;
    /// The workload key differs from the one the enrollment pinned.
    WorkloadKeyChanged => "workload_key_changed", 2;
    /// `source` is not exactly `{text, public_assertion: true}` with non-empty text.
    SourceRefused => "source_refused", 2;
    /// The request would not fit one exchange's allowance or the remaining capacity.
    TooLarge => "too_large", 2;
    /// No live declaration of this startup has this id.
    DeclarationUnknown => "declaration_unknown", 2;
    /// The declaration was used by an earlier submit.
    DeclarationUsed => "declaration_used", 2;
    /// The declaration outlived `declaration_seconds`.
    DeclarationExpired => "declaration_expired", 2;
    /// The selectors differ from the task's recorded ones.
    TargetMismatch => "target_mismatch", 2;
    /// The task outlived `task_seconds`: nothing more is sent or adopted.
    Expired => "expired", 2;
    /// The task reached an admitted terminal state: nothing more is sent.
    AlreadyTerminal => "already_terminal", 2;
    /// The enrolled CA file changed since enrollment (its SHA-256 is pinned).
    CaChanged => "ca_changed", 2;
    /// Nothing reached the peer (connect or TLS failed before the first request byte).
    TransportFailed => "transport_failed", 2;
    /// The peer refused, in an authenticated (signed) answer.
    PeerRefused => "peer_refused", 2;
    /// No run has this id.
    RunNotFound => "run_not_found", 2;
    /// The request id names another request (text, target or session).
    RequestConflict => "request_conflict", 2;
    /// No run session has this id.
    SessionUnknown => "session_unknown", 2;
    /// After a restart, the run needs `reauthorize-run` for this action.
    ReauthorizationRequired => "reauthorization_required", 2;
    /// The worker failed: the run is not settled.
    WorkerFailed => "worker_failed", 2;
    /// The task or binding digest is not the run's.
    BindingMismatch => "binding_mismatch", 2;
    /// Reauthorizing an unclaimed first submit needs `reaffirm_public_source: true`.
    ReaffirmRequired => "reaffirm_required", 2;
    /// The submit was claimed and never answered: it is never replaced.
    UncertainSubmit => "uncertain_submit", 2;
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refusal: a stable code, a detail for people (not part of the contract, never a secret) and
/// the ids the answer carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    /// The stable code.
    pub code: Code,
    /// Why, for people.
    pub detail: String,
    /// Extra members of the JSON answer (`scope`, `reason`, `task_id`, `field` ...).
    pub members: Vec<(&'static str, serde_json::Value)>,
}

impl LineError {
    /// A refusal with a detail.
    pub fn new(code: Code, detail: impl Into<String>) -> LineError {
        LineError {
            code,
            detail: detail.into(),
            members: Vec::new(),
        }
    }

    /// The same refusal with one more member in its JSON answer.
    pub fn with(mut self, name: &'static str, value: impl Into<serde_json::Value>) -> LineError {
        self.members.push((name, value.into()));
        self
    }

    /// An `unknown` outcome: exactly `{"error":"unknown","task_id":...}` (plus `operation` in a
    /// session answer), with no detail.
    pub fn unknown(task_id: &str) -> LineError {
        LineError::new(Code::Unknown, "").with("task_id", task_id)
    }

    /// The JSON answer: `{"error": code, <members>, "detail"?}`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut out = serde_json::Map::new();
        out.insert("error".into(), self.code.as_str().into());
        for (name, value) in &self.members {
            out.insert((*name).into(), value.clone());
        }
        if !self.detail.is_empty() {
            out.insert("detail".into(), self.detail.clone().into());
        }
        serde_json::Value::Object(out)
    }
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.detail)
    }
}

impl std::error::Error for LineError {}

/// A path that must be absolute.
pub fn absolute_path(what: &str, text: &str) -> Result<std::path::PathBuf, LineError> {
    let path = std::path::PathBuf::from(text);
    if text.is_empty() || !path.is_absolute() {
        return Err(LineError::new(
            Code::NotAbsolute,
            format!("{what} must be an absolute path"),
        ));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_names_are_unique_snake_case() {
        let mut names: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        assert!(
            names
                .iter()
                .all(|n| n.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
        );
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Code::ALL.len());
    }

    #[test]
    fn every_fault_point_is_named_once_where_it_is_used() {
        let used = [
            task::INTENT_POINT,
            ledger::COMMIT_POINT,
            ledger::AFTER_COMMIT_POINT,
            wire::AFTER_SEND_POINT,
            exchange::OUTCOME_POINT,
            task::CANCEL_CLOSE_POINT,
            task::AFTER_CANCEL_CLOSE_POINT,
            authority::ENROLL_POINT,
            authority::ROTATE_POINT,
            authority::REVOKE_POINT,
            native::ADOPTED_POINT,
            native::WORKER_POINT,
        ];
        assert_eq!(used.as_slice(), fault::POINTS);
    }

    #[test]
    fn r51_unknown_is_exactly_error_and_task_id() {
        let json = LineError::unknown("t-1").to_json();
        assert_eq!(
            json,
            serde_json::json!({"error": "unknown", "task_id": "t-1"})
        );
    }
}
