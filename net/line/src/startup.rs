//! The startup gate of a session, in this order, before any input line is read:
//!
//! 1. the fault variables (refused in a build without fault injection);
//! 2. the database path (absolute, from [`DATABASE_ENV`]);
//! 3. both identities (private files, distinct, each of its kind);
//! 4. the database at the custody revision (`migration_required` otherwise);
//! 5. the operator credential against the digest the host established;
//! 6. the one control process (`session_busy`);
//! 7. the public configuration, and its policy generation against the durable ones.
//!
//! Nothing is written by a refused startup.

use std::ffi::OsString;
use std::path::PathBuf;

use rusqlite::Connection;

use crate::config::PublicConfig;
use crate::custody;
use crate::fault::Faults;
use crate::schema::{self, ControlLock};
use crate::secrets::{self, Identities};
use crate::{Code, DATABASE_ENV, LineError, host};

/// A started session's context: its authority comes from here and nowhere else.
#[derive(Debug)]
pub struct Started {
    /// The custody database.
    pub conn: Connection,
    /// The database path.
    pub db: PathBuf,
    /// The control lock, held for the life of the process.
    pub lock: ControlLock,
    /// Both identities.
    pub identities: Identities,
    /// The public configuration.
    pub config: PublicConfig,
    /// The installation (the host capacity scope's key).
    pub installation_id: String,
    /// This startup's id (declarations and claims belong to it alone).
    pub startup_id: String,
    /// Faults and clock.
    pub faults: Faults,
}

/// Which session a startup opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// `outbound-public-text@1` (revision 1 or 2).
    Outbound,
    /// `native-public-peer@1` (revision 2).
    Native,
}

/// Runs the gate of the outbound session. `env` looks a variable up; `config_path` is
/// `--config`.
pub fn start(
    env: &dyn Fn(&str) -> Option<OsString>,
    config_path: &str,
) -> Result<Started, LineError> {
    start_profile(env, config_path, Profile::Outbound)
}

/// Runs the gate of `profile`: the same identities, configuration and checks for both; only
/// the database revision differs.
pub fn start_profile(
    env: &dyn Fn(&str) -> Option<OsString>,
    config_path: &str,
    profile: Profile,
) -> Result<Started, LineError> {
    let faults = Faults::from_env(env)?;
    let db_text = env(DATABASE_ENV)
        .and_then(|v| v.into_string().ok())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            LineError::new(
                Code::ConfigInvalid,
                format!("{DATABASE_ENV} must name the custody database"),
            )
        })?;
    let db = schema::db_path(&db_text)?;
    let identities = secrets::load(env)?;
    let conn = match profile {
        Profile::Outbound => schema::open_at_revision(&db)?,
        Profile::Native => schema::open_native(&db)?,
    };
    match host::credential_digest(&conn)? {
        None => {
            return Err(LineError::new(
                Code::CredentialNotSet,
                "the host has no operator credential: run `line host set-operator-credential`",
            ));
        }
        Some(stored) if !identities.operator.matches(&stored) => {
            return Err(LineError::new(
                Code::CredentialRejected,
                "the operator credential is not the one this host established",
            ));
        }
        Some(_) => {}
    }
    let lock = ControlLock::acquire(&db)?;
    let config = PublicConfig::load(config_path)?;
    check_generation(&conn, &config)?;
    let installation_id = host::installation_id(&conn)?.ok_or_else(|| {
        LineError::new(Code::PolicyNotEstablished, "the host has no installation")
    })?;
    // What an earlier process left in flight is settled, never resumed.
    custody::settle_interrupted(&conn, faults.now_ms())?;
    Ok(Started {
        conn,
        db,
        lock,
        identities,
        config,
        installation_id,
        startup_id: uuid::Uuid::new_v4().hyphenated().to_string(),
        faults,
    })
}

/// The configured generation is live: durable with the same digest, and none newer.
pub fn check_generation(conn: &Connection, config: &PublicConfig) -> Result<(), LineError> {
    let policy = &config.policy;
    match host::policy_digest(conn, policy.generation)? {
        None => {
            return Err(LineError::new(
                Code::PolicyNotEstablished,
                format!(
                    "the host has not established policy generation {}",
                    policy.generation
                ),
            ));
        }
        Some(digest) if digest != policy.digest => {
            return Err(LineError::new(
                Code::PolicyMismatch,
                format!(
                    "the durable policy generation {} differs from the configured one",
                    policy.generation
                ),
            ));
        }
        Some(_) => {}
    }
    check_live(conn, policy.generation)
}

/// `stale_generation` when a generation newer than `generation` is durable (checked by every
/// operation, inside the transaction that charges or claims).
pub fn check_live(conn: &Connection, generation: u64) -> Result<(), LineError> {
    match host::newest_policy(conn)? {
        Some((newest, _)) if newest > generation => Err(LineError::new(
            Code::StaleGeneration,
            format!(
                "policy generation {newest} is durable: generation {generation} has no authority"
            ),
        )
        .with("generation", newest)),
        _ => Ok(()),
    }
}
