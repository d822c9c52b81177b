//! `line_host` (the installation and the operator credential's digest) and `line_policy` (the
//! durable policy generations).

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::LineError;
use crate::policy::PeerPolicy;
use crate::schema::io;

/// The installation id, if the host has one.
pub fn installation_id(conn: &Connection) -> Result<Option<String>, LineError> {
    conn.query_row(
        "SELECT installation_id FROM line_host WHERE singleton = 1",
        [],
        |r| r.get(0),
    )
    .optional()
    .map_err(|e| io("cannot read the installation", e))
}

/// The installation id, recorded now when the host has none.
pub(crate) fn installation(tx: &Transaction<'_>, now_ms: i64) -> Result<String, LineError> {
    if let Some(id) = installation_id(tx)? {
        return Ok(id);
    }
    let id = uuid::Uuid::new_v4().hyphenated().to_string();
    tx.execute(
        "INSERT INTO line_host (singleton, installation_id, created_at_ms) VALUES (1, ?1, ?2)",
        params![id, now_ms],
    )
    .map_err(|e| io("cannot record the installation", e))?;
    Ok(id)
}

/// The stored credential digest (`None` when the host has set none).
pub fn credential_digest(conn: &Connection) -> Result<Option<Vec<u8>>, LineError> {
    let row: Option<Option<Vec<u8>>> = conn
        .query_row(
            "SELECT operator_credential_sha256 FROM line_host WHERE singleton = 1",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| io("cannot read the credential digest", e))?;
    Ok(row.flatten())
}

/// Stores `digest` as the operator credential's.
pub(crate) fn set_credential_digest(
    tx: &Transaction<'_>,
    digest: &[u8],
    now_ms: i64,
) -> Result<(), LineError> {
    tx.execute(
        "UPDATE line_host SET operator_credential_sha256 = ?1, credential_set_at_ms = ?2 \
         WHERE singleton = 1",
        params![digest, now_ms],
    )
    .map_err(|e| io("cannot store the credential digest", e))?;
    Ok(())
}

/// The newest durable generation and its digest.
pub fn newest_policy(conn: &Connection) -> Result<Option<(u64, String)>, LineError> {
    conn.query_row(
        "SELECT generation, digest FROM line_policy ORDER BY generation DESC LIMIT 1",
        [],
        |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)),
    )
    .optional()
    .map_err(|e| io("cannot read the policy generations", e))
}

/// The digest of a durable generation.
pub fn policy_digest(conn: &Connection, generation: u64) -> Result<Option<String>, LineError> {
    conn.query_row(
        "SELECT digest FROM line_policy WHERE generation = ?1",
        [generation as i64],
        |r| r.get(0),
    )
    .optional()
    .map_err(|e| io("cannot read the policy generation", e))
}

/// Records `policy` as its generation.
pub(crate) fn insert_policy(
    tx: &Transaction<'_>,
    policy: &PeerPolicy,
    now_ms: i64,
) -> Result<(), LineError> {
    tx.execute(
        "INSERT INTO line_policy (generation, digest, record_json, established_at_ms) \
         VALUES (?1, ?2, ?3, ?4)",
        params![
            policy.generation as i64,
            policy.digest,
            policy.canonical,
            now_ms
        ],
    )
    .map_err(|e| io("cannot store the policy", e))?;
    Ok(())
}
